# A throttled neighbour in the pool: does a cgroup whose cpu.max quota is
# tiny, and whose worker always has work, delay another cgroup's
# background reclaim?  The pool has one slot (max_active 1).  Cgroup b
# streams a file through memory.max = 64 MiB with watermarks high=90%
# low=80%; in "throttled", cgroup a (cpu.max 1000 100000: 1% of one CPU)
# first fills 96 MiB of page cache, then gets high=10% low=5% of its
# 128 MiB limit, so its worker has far more to reclaim than its quota
# lets it.  The host reads b's waits for a worker, from each queueing to
# the run it started, out of the queue and begin tracepoints.

NEIGHBOUR_B_MAX=$((64 << 20))
NEIGHBOUR_B_FILE_MIB=192
NEIGHBOUR_A_MAX=$((128 << 20))
NEIGHBOUR_A_FILE_MIB=96
NEIGHBOUR_A_CPU_MAX="1000 100000"
TRACE=/sys/kernel/tracing
POOL_MAX_ACTIVE=/sys/bus/workqueue/devices/memcg_bgreclaim/max_active

scenario_setup() {
	dd if=/dev/zero of="$SCRATCH/neighbour-a.dat" bs=1M \
		count="$NEIGHBOUR_A_FILE_MIB" status=none &&
		dd if=/dev/zero of="$SCRATCH/neighbour-b.dat" bs=1M \
			count="$NEIGHBOUR_B_FILE_MIB" status=none && sync ||
		return 1
	mountpoint -q "$TRACE" || mount -t tracefs none "$TRACE"
	echo 16384 > "$TRACE/buffer_size_kb"
	# One clock for all CPUs, so that events order across them.
	echo global > "$TRACE/trace_clock"
}

trace_events() {
	local ev
	for ev in queue begin end; do
		echo "$1" > "$TRACE/events/vmscan/mm_vmscan_memcg_bgreclaim_$ev/enable"
	done
}

trial() {
	local variant=$1 a=$BENCH_CG/a b=$BENCH_CG/b max_active start wall
	local a_usage0=0 a_start
	fresh_cgroup || return 1
	echo "+memory +cpu" > "$BENCH_CG/cgroup.subtree_control" || return 1
	mkdir "$a" "$b" || return 1
	echo "$NEIGHBOUR_A_MAX" > "$a/memory.max"
	echo "$NEIGHBOUR_B_MAX" > "$b/memory.max"
	echo 3 > /proc/sys/vm/drop_caches
	max_active=$(cat "$POOL_MAX_ACTIVE")
	echo 1 > "$POOL_MAX_ACTIVE" || return 1
	case $variant in
	alone) ;;
	throttled)
		run_in "$a" cat "$SCRATCH/neighbour-a.dat" > /dev/null
		wait_workload || return 1
		# a's CPU counts from here: its page cache was read before.
		a_usage0=$(cpu_stat_of "$a" usage_usec)
		echo "$NEIGHBOUR_A_CPU_MAX" > "$a/cpu.max" &&
			echo "high=10% low=5%" > "$a/memory.reclaim_wmarks" ||
			return 1
		;;
	*)
		echo "bench: unknown variant $variant" >&2
		return 1
		;;
	esac
	a_start=$(now)
	echo "high=90% low=80%" > "$b/memory.reclaim_wmarks" || return 1
	mkdir -p "$RESULTS/latency"
	echo > "$TRACE/trace"
	trace_events 1
	start=$(now)
	run_in "$b" cat "$SCRATCH/neighbour-b.dat" > /dev/null
	wait_workload || return 1
	wall=$(elapsed "$start")
	# b's last runs, which bring it to its low watermark.
	sleep 1
	trace_events 0
	echo "$max_active" > "$POOL_MAX_ACTIVE"
	cp "$TRACE/trace" "$RESULTS/latency/$TRIAL_ID.trace"
	echo "waits_file latency/$TRIAL_ID.trace"
	echo "waits_cgroup_id $(stat -c %i "$b")"
	echo "slot_cgroup_id $(stat -c %i "$a")"
	echo "b_mib_per_s $(echo "$NEIGHBOUR_B_FILE_MIB / $wall" | bc -l)"
	echo "b_pgscan_direct $(stat_of "$b" pgscan_direct)"
	echo "b_runs $(stat_of "$b" bgreclaim_runs)"
	echo "a_worker_cpu_ms $(echo "$(stat_of "$a" bgreclaim_cpu_usec) / 1000" | bc -l)"
	echo "a_pauses $(stat_of "$a" bgreclaim_throttled)"
	echo "a_cpu_pct $(echo "($(cpu_stat_of "$a" usage_usec) - $a_usage0) / ($(elapsed "$a_start") * 10000)" | bc -l)"
}
