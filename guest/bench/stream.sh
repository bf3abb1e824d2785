# Streaming page cache (the 2011 per-memcg kswapd test, scaled down): one
# reader streams a file eight times larger than the cgroup's memory.max.

STREAM_MAX=$((64 << 20))
STREAM_FILE_MIB=512

scenario_setup() {
	dd if=/dev/zero of="$SCRATCH/stream.dat" bs=1M \
		count="$STREAM_FILE_MIB" status=none && sync
}

trial() {
	local variant=$1 cpu0 start wall
	fresh_cgroup || return 1
	echo "$STREAM_MAX" > "$BENCH_CG/memory.max"
	echo 3 > /proc/sys/vm/drop_caches
	set_variant "$BENCH_CG" "$variant" "$STREAM_MAX" || return 1
	cpu0=$(cpu_ticks)
	start=$(now)
	run_in "$BENCH_CG" dd if="$SCRATCH/stream.dat" of=/dev/null bs=1M \
		status=none
	wait_workload || return 1
	wall=$(elapsed "$start")
	stop_reclaimer
	echo "wall_s $wall"
	echo "mib_per_s $(echo "$STREAM_FILE_MIB / $wall" | bc -l)"
	echo "cpu_s $(echo "($(cpu_ticks) - $cpu0) / $(getconf CLK_TCK)" | bc -l)"
	# The cgroup's system time includes its worker's since patch 0006.
	echo "reader_system_s $(echo "$(cpu_stat_of "$BENCH_CG" system_usec) / 1000000" | bc -l)"
	echo "reader_own_system_s $(echo "($(cpu_stat_of "$BENCH_CG" system_usec) - $(stat_of "$BENCH_CG" bgreclaim_cpu_usec)) / 1000000" | bc -l)"
	echo "max_events $(event_of "$BENCH_CG" max)"
	reclaim_counters "$BENCH_CG"
}
