#!/bin/bash
# Boot check for one commit of the series: charge and reclaim in a memory
# cgroup under memory.high, with background reclaim on when the kernel has
# it, and show the counters.  The host judges the console (splats, KUnit).
# usage: smoke.sh RESULTS_DIR
set -u
results=$1
. "$(dirname "$0")/common.sh"

guest_setup || { guest_finish "$results" 1; exit 1; }
cg=/sys/fs/cgroup/smoke
mkdir "$cg" && echo 32M > "$cg/memory.high" || { guest_finish "$results" 1; exit 1; }
if [ -e "$cg/memory.reclaim_wmarks" ]; then
	echo auto > "$cg/memory.reclaim_wmarks" || { guest_finish "$results" 1; exit 1; }
	echo "guest: memory.reclaim_wmarks $(cat "$cg/memory.reclaim_wmarks")"
fi
in-cgroup "$cg" dd if=/dev/zero of="$SCRATCH/smoke" bs=1M count=128 status=none
rc=$?
sleep 1
grep -E '^(pgscan|pgsteal|bgreclaim)' "$cg/memory.stat" | sed 's/^/guest: /'
rm -f "$SCRATCH/smoke"
rmdir "$cg"
guest_finish "$results" "$rc"
