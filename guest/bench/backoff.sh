# Pressure without progress: a cgroup above its high watermark holds only
# memory the worker cannot reclaim, and keeps charging.  Each variant is a
# case: "noswap" (anonymous memory, memory.swap.max = 0), "mlock" (locked
# anonymous memory), "protected" (page cache of a child under memory.min).
# Measured over BACKOFF_SECONDS once the worker has given up: its runs,
# give-ups and CPU time.

BACKOFF_MAX=$((64 << 20))
BACKOFF_HOLD_MIB=32
BACKOFF_SECONDS=60

scenario_setup() {
	dd if=/dev/zero of="$SCRATCH/backoff.dat" bs=1M \
		count="$BACKOFF_HOLD_MIB" status=none && sync
}

# Wait up to 60 s for the first give-up.
wait_giveup() {
	for _ in $(seq 600); do
		[ "$(stat_of "$BENCH_CG" bgreclaim_giveups)" -gt 0 ] && return 0
		sleep 0.1
	done
	echo "bench: the worker never gave up" >&2
	return 1
}

trial() {
	local case=$1 runs0 cpu0 give0 usage
	fresh_cgroup || return 1
	echo "$BACKOFF_MAX" > "$BENCH_CG/memory.max"
	echo "high=25% low=20%" > "$BENCH_CG/memory.reclaim_wmarks"
	case $case in
	noswap)
		echo 0 > "$BENCH_CG/memory.swap.max"
		run_in "$BENCH_CG" "$BIN/anonhold" "$BACKOFF_HOLD_MIB"
		;;
	mlock)
		run_in "$BENCH_CG" "$BIN/anonhold" "$BACKOFF_HOLD_MIB" mlock
		;;
	protected)
		echo +memory > "$BENCH_CG/cgroup.subtree_control"
		mkdir "$BENCH_CG/child"
		echo "$BACKOFF_MAX" > "$BENCH_CG/child/memory.min"
		# The file's page cache must be charged to the child.
		echo 3 > /proc/sys/vm/drop_caches
		run_in "$BENCH_CG/child" sh -c \
			'cat "$1" > /dev/null && exec sleep 3600' sh "$SCRATCH/backoff.dat"
		;;
	*)
		echo "bench: unknown case $case" >&2
		return 1
		;;
	esac
	wait_giveup || return 1
	runs0=$(stat_of "$BENCH_CG" bgreclaim_runs)
	give0=$(stat_of "$BENCH_CG" bgreclaim_giveups)
	cpu0=$(stat_of "$BENCH_CG" bgreclaim_cpu_usec)
	sleep "$BACKOFF_SECONDS"
	usage=$(cat "$BENCH_CG/memory.current")
	echo "runs $(($(stat_of "$BENCH_CG" bgreclaim_runs) - runs0))"
	echo "giveups $(($(stat_of "$BENCH_CG" bgreclaim_giveups) - give0))"
	echo "worker_cpu_ms $(echo "($(stat_of "$BENCH_CG" bgreclaim_cpu_usec) - $cpu0) / 1000" | bc -l)"
	echo "worker_cpu_pct $(echo "($(stat_of "$BENCH_CG" bgreclaim_cpu_usec) - $cpu0) / ($BACKOFF_SECONDS * 10000)" | bc -l)"
	echo "usage_mib $((usage >> 20))"
	echo "high_wmark_mib $(($(awk '$1 == "high" {print $2}' "$BENCH_CG/memory.reclaim_wmarks.effective") >> 20))"
	remove_cgroup "$BENCH_CG"
	wait_workload 2> /dev/null || :	# killed with the cgroup
}
