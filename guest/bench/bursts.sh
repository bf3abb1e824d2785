# Bursts with idle time between them: a cgroup held at its memory.high by
# cold page cache (a slow reader), and an allocator that every
# BURSTS_IDLE_S takes BURSTS_MIB of anonymous memory at once, touches it
# and exits.  On average the cgroup allocates well within what one worker
# reclaims, and the CPU is idle between bursts.  Variant "floor" has no
# limit at all.

BURSTS_HIGH=$((128 << 20))
BURSTS_MIB=24
BURSTS_COUNT=8
BURSTS_IDLE_S=3
BURSTS_READ_MIB_S=4
BURSTS_FILE_MIB=512
# auto+cpumax gives the tenant one of the 2 vCPUs, as in service.
VARIANT_CPU_MAX="100000 100000"

scenario_setup() {
	dd if=/dev/zero of="$SCRATCH/bursts.dat" bs=1M \
		count="$BURSTS_FILE_MIB" status=none && sync
}

# burst_loop FILE: BURSTS_COUNT bursts; each one's completion time in
# milliseconds, from its start to its exit, appended to FILE.
burst_loop() {
	local i start
	for i in $(seq "$BURSTS_COUNT"); do
		sleep "$BURSTS_IDLE_S"
		start=$(date +%s%N)
		"$BIN/memhog" "$BURSTS_MIB" "$BURSTS_MIB" 1 > /dev/null ||
			return 1
		echo $((($(date +%s%N) - start) / 1000000)) >> "$1"
	done
}

trial() {
	local variant=$1 setting=$1 lat=$SCRATCH/bursts.lat cpu0 high0 bg0
	fresh_cgroup || return 1
	echo 3 > /proc/sys/vm/drop_caches
	rm -f "$lat"
	if [ "$variant" = floor ]; then
		setting=off
	else
		echo "$BURSTS_HIGH" > "$BENCH_CG/memory.high"
	fi
	set_variant "$BENCH_CG" "$setting" "$BURSTS_HIGH" || return 1
	# Fill the cgroup to its limit with page cache, then keep it there.
	in-cgroup "$BENCH_CG" dd if="$SCRATCH/bursts.dat" of=/dev/null bs=1M \
		count=$((BURSTS_HIGH >> 20)) status=none || return 1
	run_in "$BENCH_CG" "$BIN/pacedread" "$SCRATCH/bursts.dat" \
		"$BURSTS_READ_MIB_S" /dev/null
	high0=$(event_of "$BENCH_CG" high)
	bg0=$(stat_of "$BENCH_CG" bgreclaim_cpu_usec)
	cpu0=$(cpu_ticks)
	in-cgroup "$BENCH_CG" bash -c "$(declare -f burst_loop); $(declare -p \
		BIN BURSTS_COUNT BURSTS_IDLE_S BURSTS_MIB); burst_loop $lat" ||
		return 1
	echo "cpu_s $(echo "($(cpu_ticks) - $cpu0) / $(getconf CLK_TCK)" | bc -l)"
	echo "high_events $(($(event_of "$BENCH_CG" high) - high0))"
	echo "worker_cpu_s $(echo "($(stat_of "$BENCH_CG" bgreclaim_cpu_usec) - $bg0) / 1000000" | bc -l)"
	echo 1 > "$BENCH_CG/cgroup.kill"
	wait "${WORKLOAD_PIDS[@]}" 2> /dev/null
	WORKLOAD_PIDS=()
	stop_reclaimer
	echo "latency_ms_file $(latency_file "$lat")"
	reclaim_counters "$BENCH_CG"
}
