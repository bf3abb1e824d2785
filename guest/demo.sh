#!/bin/bash
# Live demonstration inside the VM: two workloads in a memory cgroup under
# memory.high, each once with background reclaim off and, when the kernel
# has it, with memory.reclaim_wmarks=auto, which the cgroup pays for under
# its CPU controller; sampled once a second, then compared side by side.
# The first, a reader at a steady rate that leaves CPU idle, is the case
# background reclaim is for.  The second, eight allocators that keep every
# CPU busy, is the case where the worker, one more task of the cgroup,
# takes its CPU from the tasks it relieves.
# usage: demo.sh RESULTS_DIR PROGRAMS_DIR
set -u
results=$1 progs=$2
. "$(dirname "$0")/common.sh"

HIGH=256M NPROC=8 MIB_EACH=64 PASSES=3
# The reader: a file of twice memory.high at 64 MiB/s.
READ_MIB=512 READ_RATE=64

stat_of() { awk -v k="$2" '$1 == k {print $2; f=1} END {if (!f) print "-"}' "$1/memory.stat"; }
event_of() { awk -v k="$2" '$1 == k {print $2}' "$1/memory.events"; }
psi_total() { sed -n "s/^$2 .*total=\([0-9]*\).*/\1/p" "$1/memory.pressure"; }

# sample_row NAME T CG: one row of the live table.  Every value is read
# with shell builtins, in quick succession: under this much pressure each
# fork takes long enough that a row read with awk mixed moments far
# apart (usage from before the first charge, counters from later).
sample_row() {
	local cg=$3 usage k v high=0 direct=- bg=- psi
	read -r usage < "$cg/memory.current"
	while read -r k v; do
		[ "$k" = high ] && high=$v
	done < "$cg/memory.events"
	while read -r k v; do
		case $k in
		pgscan_direct) direct=$v ;;
		pgscan_bgreclaim) bg=$v ;;
		esac
	done < "$cg/memory.stat"
	read -r _ psi _ < "$cg/memory.pressure"
	printf '| %-9s | %4d | %9d | %11d | %13s | %16s | %9s |\n' \
		"$1" "$2" $((usage >> 20)) "$high" "$direct" "$bg" "${psi#avg10=}"
}

# start_readers CG NAME: the reader, its block latencies in
# $SCRATCH/NAME.lat.
start_readers() {
	echo 3 > /proc/sys/vm/drop_caches
	in-cgroup "$1" "$progs/pacedread" "$SCRATCH/demo.dat" "$READ_RATE" \
		"$SCRATCH/$2.lat" > /dev/null &
}

# start_allocators CG NAME: the allocators, one summary line each in
# $SCRATCH/NAME.memhog.N.
start_allocators() {
	local i
	for i in $(seq "$NPROC"); do
		in-cgroup "$1" "$progs/memhog" "$MIB_EACH" 2 "$PASSES" \
			> "$SCRATCH/$2.memhog.$i" &
	done
}

# latencies NAME: the worst allocator's chunk latency percentiles, or the
# reader's block latency percentiles, as summary lines.
latencies() {
	if [ -e "$SCRATCH/$1.lat" ]; then
		sort -n "$SCRATCH/$1.lat" | awk '{ l[NR] = $1 } END {
			print "latency_p50_ms", l[int((NR + 1) * 0.5)]
			print "latency_p99_ms", l[int((NR + 1) * 0.99)]
			print "latency_max_ms", l[NR] }'
		return
	fi
	cat "$SCRATCH/$1".memhog.* | tr ' =' '\n ' | awk '
		$1 == "p50_ms" && $2 > p50 {p50 = $2}
		$1 == "p99_ms" && $2 > p99 {p99 = $2}
		$1 == "max_ms" && $2 > max {max = $2}
		END {print "latency_p50_ms", p50; print "latency_p99_ms", p99;
		     print "latency_max_ms", max}'
}

# run_case NAME WORKLOAD WMARKS: run WORKLOAD (readers or
# allocators) in cgroup NAME, leave its figures in $SCRATCH/NAME.summary
# as "key value" lines.
run_case() {
	local name=$1 workload=$2 wmarks=$3 cg=/sys/fs/cgroup/$1
	local t=0 start end what
	mkdir -p "$cg"
	echo "$HIGH" > "$cg/memory.high"
	[ "$wmarks" = - ] || echo "$wmarks" > "$cg/memory.reclaim_wmarks"
	case $workload in
	readers) what="a reader of a ${READ_MIB} MiB file at $READ_RATE MiB/s" ;;
	allocators) what="$NPROC processes x ${MIB_EACH} MiB x $PASSES passes" ;;
	esac
	echo "demo: cgroup $name: memory.high=$HIGH," \
		"memory.reclaim_wmarks=$wmarks," \
		"$what, swap on zswap"
	start=$(date +%s.%N)
	"start_$workload" "$cg" "$name"
	printf '| %-9s | %4s | %9s | %11s | %13s | %16s | %9s |\n' cgroup "t(s)" \
		"usage MiB" "high events" "pgscan_direct" "pgscan_bgreclaim" \
		"PSI some"
	while [ -n "$(jobs -r)" ]; do
		sample_row "$name" "$t" "$cg"
		sleep 1
		t=$((t + 1))
	done
	wait
	end=$(date +%s.%N)
	{
		echo "wall_s $(echo "$end - $start" | bc)"
		echo "high_events $(event_of "$cg" high)"
		for k in pgscan_direct pgsteal_direct pgscan_kswapd pgsteal_kswapd \
			pgscan_bgreclaim pgsteal_bgreclaim bgreclaim_runs \
			bgreclaim_giveups bgreclaim_cpu_usec \
			bgreclaim_throttled bgreclaim_thrashing; do
			echo "$k $(stat_of "$cg" "$k")"
		done
		echo "psi_some_us $(psi_total "$cg" some)"
		echo "psi_full_us $(psi_total "$cg" full)"
		latencies "$name"
	} > "$SCRATCH/$name.summary"
}

# side_by_side TITLE CASE...: the cases' summaries in one table.
side_by_side() {
	local k c
	echo "demo: $1"
	shift
	printf 'demo: | %-26s |' metric
	for c in "$@"; do printf ' %14s |' "$c"; done
	echo
	for k in $(awk '{print $1}' "$SCRATCH/$1.summary"); do
		printf 'demo: | %-26s |' "$k"
		for c in "$@"; do
			printf ' %14s |' "$(awk -v k="$k" '$1 == k {print $2}' "$SCRATCH/$c.summary")"
		done
		echo
	done
}

guest_setup || { guest_finish "$results" 1; exit 1; }
echo Y > /sys/module/zswap/parameters/enabled 2>/dev/null
mkdir -p /sys/fs/cgroup/probe
if [ -e /sys/fs/cgroup/probe/memory.reclaim_wmarks ]; then
	cases="off auto"
else
	cases=off
	echo "demo: this kernel has no memory.reclaim_wmarks;" \
		"showing memory.high throttling alone"
fi
rmdir /sys/fs/cgroup/probe
dd if=/dev/zero of="$SCRATCH/demo.dat" bs=1M count="$READ_MIB" status=none &&
	sync
read_cases=
for c in $cases; do
	case $c in
	off) run_case read-off readers - ;;
	auto) run_case read-auto readers auto ;;
	*) continue ;;
	esac
	read_cases="$read_cases read-$c"
done
for c in $cases; do
	case $c in
	off) run_case off allocators - ;;
	auto) run_case auto allocators auto ;;
	esac
done

# shellcheck disable=SC2086 # one word per case
side_by_side "the reader, CPU left idle (block latencies):" $read_cases
# shellcheck disable=SC2086
side_by_side "the allocators, every CPU busy (the worst process's 2 MiB chunk latencies):" \
	$cases
guest_finish "$results" 0
