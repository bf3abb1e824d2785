#!/bin/bash
# Check tools/cgroup/memcg_bgreclaim_top.py against a live cgroup whose
# worker is reclaiming: the JSON mode must list it with its watermarks and
# background reclaim, the table mode must print it, and a kernel file
# system without the feature must give a clear error.  Then run the
# documented counter, trace-cmd and bpftrace recipes on the same cgroup.
# usage: check_top.sh TOOL KERNEL_BUILD_DIR
set -u
tool=$1 kbuild=$2
. "$(dirname "$0")/common.sh"
cg=/sys/fs/cgroup/top-check
fail() { echo "check_top: $*"; cleanup; exit 1; }
cleanup() {
	echo 1 > "$cg/cgroup.kill" 2>/dev/null
	sleep 0.5
	rmdir "$cg" 2>/dev/null
	rm -f "$SCRATCH/top-check"
}

# Steady pressure: reread a file larger than the limit, from disk each
# time (rewriting a file would free its page cache now and then, and the
# worker would rightly have nothing to do in that moment).
dd if=/dev/zero of="$SCRATCH/top-check" bs=1M count=160 status=none || exit 1
sync
echo 3 > /proc/sys/vm/drop_caches
mkdir "$cg" || exit 1
echo 64M > "$cg/memory.max"
echo "high=50% low=40%" > "$cg/memory.reclaim_wmarks"
in-cgroup "$cg" sh -c 'while :; do cat "$1" > /dev/null; done' sh \
	"$SCRATCH/top-check" &
sleep 2
json=$(python3 "$tool" --json 3) || fail "--json failed"
echo "$json" | python3 -c '
import json, sys
doc = json.load(sys.stdin)
rows = {r["name"]: r for r in doc["cgroups"]}
r = rows.get("top-check")
if r is None:
    sys.exit("top-check is missing from " + ", ".join(rows))
problems = []
if r["high_wmark"] != 32 << 20:
    problems.append("high_wmark %s, want %d" % (r["high_wmark"], 32 << 20))
if r["limit"] != 64 << 20:
    problems.append("limit %s" % r["limit"])
if r["bgreclaim_runs"] <= 0 or r["bg_steal_per_s"] <= 0:
    problems.append("no background reclaim seen: runs %s, %s pages/s"
                    % (r["bgreclaim_runs"], r["bg_steal_per_s"]))
if problems:
    sys.exit("; ".join(problems))
print("check_top: json ok: usage %d MiB, background %.0f pages/s, "
      "direct %.0f pages/s, worker CPU %.1f%%" % (r["usage"] >> 20,
      r["bg_steal_per_s"], r["direct_steal_per_s"], r["worker_cpu_pct"]))
' || fail "unexpected JSON"
table=$(python3 "$tool" --once 1) || fail "--once failed"
echo "$table"
echo "$table" | grep -q '^top-check ' || fail "top-check missing from the table"
err=$(python3 "$tool" --once --root /proc 1 2>&1) && fail "no error on /proc"
echo "$err" | grep -q "not a cgroup v2 mount" || fail "unclear error: $err"
echo "check_top: error without cgroup v2: $err"

id=$(stat -c %i "$cg")
trace-cmd record -q -o "$SCRATCH/top-check.dat" \
	-e vmscan:mm_vmscan_memcg_bgreclaim_end -f "cgroup_id == $id" \
	sleep 3 > /dev/null 2>&1 || fail "trace-cmd record failed"
report=$(trace-cmd report -i "$SCRATCH/top-check.dat" 2>/dev/null |
	grep mm_vmscan_memcg_bgreclaim_end)
rm -f "$SCRATCH/top-check.dat"
[ -n "$report" ] || fail "trace-cmd saw no run of cgroup $id"
echo "check_top: trace-cmd: $(echo "$report" | wc -l) runs of cgroup $id, last:"
echo "$report" | tail -n 1

# The counter recipe, as the documentation gives it.
CG=$cg
counters=$(grep -E '^(pgscan|pgsteal)_(direct|bgreclaim) |^bgreclaim_' \
	$CG/memory.stat; grep '^high ' $CG/memory.events)
echo "check_top: counters:"
echo "$counters"
steal=$(echo "$counters" | awk '$1 == "pgsteal_bgreclaim" { print $2 }')
[ "${steal:-0}" -gt 0 ] || fail "no pgsteal_bgreclaim in the counters"

# The bpftrace recipe: the wait from queueing to a worker starting, for
# 3 s instead of until ^C (the worker runs over 50 times a second here).
# The test kernels have no BTF, so bpftrace reads the tracepoints' field
# types (u64) from the kernel's headers.
out=$(BPFTRACE_KERNEL_SOURCE=$(cd "$(dirname "$tool")/../.." && pwd) \
	BPFTRACE_KERNEL_BUILD=$kbuild timeout 300 bpftrace -e '
	tracepoint:vmscan:mm_vmscan_memcg_bgreclaim_queue { @q[args->cgroup_id] = nsecs; }
	tracepoint:vmscan:mm_vmscan_memcg_bgreclaim_begin /@q[args->cgroup_id]/ {
		@wait_us = hist((nsecs - @q[args->cgroup_id]) / 1000); delete(@q[args->cgroup_id]); }
	END { clear(@q); }
	interval:s:3 { exit(); }' 2>&1)
echo "check_top: bpftrace:"
echo "$out"
echo "$out" | grep -q '^@wait_us:' || fail "bpftrace printed no @wait_us histogram"
cleanup
