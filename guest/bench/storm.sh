# Throttling storm: 4 processes per vCPU, started at the same moment,
# allocate and touch anonymous memory in 1 MiB chunks, together twice
# the cgroup's memory.high, with swap on zswap.

STORM_HIGH=$((128 << 20))
STORM_MIB_EACH=32
STORM_PASSES=2

scenario_setup() {
	echo Y > /sys/module/zswap/parameters/enabled
}

trial() {
	local variant=$1 nproc=$(($(nproc) * 4)) lat=$SCRATCH/storm.lat
	local cpu0 start wall i
	fresh_cgroup || return 1
	echo "$STORM_HIGH" > "$BENCH_CG/memory.high"
	set_variant "$BENCH_CG" "$variant" "$STORM_HIGH" || return 1
	rm -f "$lat"
	for i in $(seq "$nproc"); do
		run_held "$BENCH_CG" "$BIN/memhog" "$STORM_MIB_EACH" 1 \
			"$STORM_PASSES" "$lat" > /dev/null
	done
	cpu0=$(cpu_ticks)
	start=$(now)
	lock_stats_start || return 1
	release_held
	sample_usage "$BENCH_CG" > "$SCRATCH/storm.usage" &
	local sampler=$! rc=0
	wait_workload || rc=1
	lock_stats_stop || rc=1
	wall=$(elapsed "$start")
	kill "$sampler"
	wait "$sampler" 2> /dev/null
	[ $rc -eq 0 ] || return 1
	stop_reclaimer
	echo "usage_mean_mib $(awk '{ s += $1 } END { print s / (NR ? NR : 1) / 1048576 }' "$SCRATCH/storm.usage")"
	echo "wall_s $wall"
	echo "cpu_s $(echo "($(cpu_ticks) - $cpu0) / $(getconf CLK_TCK)" | bc -l)"
	echo "mib_per_s $(echo "$nproc * $STORM_MIB_EACH * $STORM_PASSES / $wall" | bc -l)"
	echo "high_events $(event_of "$BENCH_CG" high)"
	echo "psi_some_us $(psi_some_us "$BENCH_CG")"
	reclaim_counters "$BENCH_CG"
	echo "latency_ms_file $(latency_file "$lat")"
}
