# Many cgroups: MANY_TOTAL cgroups with limits and watermarks, of which
# MANY_PRESSURED fill their page cache past the high watermark at once.
# The work item tracepoints (queue, begin, end) are kept for the host, which
# derives the pool's concurrency, the wait for a worker and the fairness.

MANY_TOTAL=1000
MANY_PRESSURED=100
MANY_MAX=$((16 << 20))
MANY_FILE_MIB=12
TRACE=/sys/kernel/tracing

scenario_setup() {
	local i
	mkdir -p "$SCRATCH/many"
	for i in $(seq 0 $((MANY_PRESSURED - 1))); do
		dd if=/dev/zero of="$SCRATCH/many/$i" bs=1M \
			count="$MANY_FILE_MIB" status=none || return 1
	done
	sync
	mountpoint -q "$TRACE" || mount -t tracefs none "$TRACE"
	echo 16384 > "$TRACE/buffer_size_kb"
	# One clock for all CPUs, so that events order across them.
	echo global > "$TRACE/trace_clock"
}

# Cgroup ids (their inode numbers), names and usage now: the list
# served_count() reads during the trial, and the host's data after it.
cgroup_usage() {
	local i
	for i in $(seq 0 $((MANY_PRESSURED - 1))); do
		echo "$(stat -c %i "$BENCH_CG/c$i") c$i $(cat "$BENCH_CG/c$i/memory.current")"
	done > "$RESULTS/latency/$TRIAL_ID.ids"
}

# How many pressured cgroups' last traced event is a run that ended at the
# low watermark (stop=done): a later queueing would be traced after it.
served_count() {
	awk 'NR == FNR { want[$1] = 1; next }
	     /mm_vmscan_memcg_bgreclaim_/ {
		id = ""; done = 0
		for (i = 1; i <= NF; i++) {
			if ($i ~ /^cgroup_id=/) id = substr($i, 11)
			if ($i == "stop=done") done = 1
		}
		if (id in want) last[id] = done
	     }
	     END { n = 0; for (id in last) n += last[id]; print n }' \
		"$RESULTS/latency/$TRIAL_ID.ids" "$TRACE/trace"
}

trial() {
	local variant=$1 i cpu0 start wall ev
	fresh_cgroup || return 1
	echo +memory > "$BENCH_CG/cgroup.subtree_control"
	for i in $(seq 0 $((MANY_TOTAL - 1))); do
		mkdir "$BENCH_CG/c$i" &&
			echo "$MANY_MAX" > "$BENCH_CG/c$i/memory.max" || return 1
		[ "$variant" = userspace ] || set_variant "$BENCH_CG/c$i" \
			"$variant" "$MANY_MAX" || return 1
	done
	mkdir -p "$RESULTS/latency"
	cgroup_usage
	echo 3 > /proc/sys/vm/drop_caches
	echo > "$TRACE/trace"
	for ev in queue begin end; do
		echo 1 > "$TRACE/events/vmscan/mm_vmscan_memcg_bgreclaim_$ev/enable"
	done
	cpu0=$(cpu_ticks)
	start=$(now)
	for i in $(seq 0 $((MANY_PRESSURED - 1))); do
		run_in "$BENCH_CG/c$i" cat "$SCRATCH/many/$i" > /dev/null
	done
	wait_workload || return 1
	# Until every pressured cgroup is served, for two minutes at most (the
	# host reports the cgroups not served).
	local deadline=$((SECONDS + 120))
	while [ $SECONDS -lt $deadline ] &&
	      [ "$(served_count)" -lt "$MANY_PRESSURED" ]; do
		sleep 0.5
	done
	wall=$(elapsed "$start")
	for ev in queue begin end; do
		echo 0 > "$TRACE/events/vmscan/mm_vmscan_memcg_bgreclaim_$ev/enable"
	done
	cp "$TRACE/trace" "$RESULTS/latency/$TRIAL_ID.trace"
	cgroup_usage
	echo "wall_s $wall"
	echo "cpu_s $(echo "($(cpu_ticks) - $cpu0) / $(getconf CLK_TCK)" | bc -l)"
	echo "pool_max_active $(cat /sys/bus/workqueue/devices/memcg_bgreclaim/max_active)"
	echo "low_bytes $(awk '$1 == "low" {print $2}' "$BENCH_CG/c0/memory.reclaim_wmarks.effective")"
	echo "high_bytes $(awk '$1 == "high" {print $2}' "$BENCH_CG/c0/memory.reclaim_wmarks.effective")"
	echo "file_bytes $((MANY_FILE_MIB << 20))"
	echo "trace_file latency/$TRIAL_ID.trace"
	echo "ids_file latency/$TRIAL_ID.ids"
	reclaim_counters "$BENCH_CG"
}
