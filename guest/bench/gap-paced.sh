# Watermark gap at a steady allocation rate: one reader streams a file
# three times larger than memory.max at fixed rates (pacedread), from
# well below to close to what the worker reclaims, with the gap between
# memory.max and the high watermark, and between the watermarks, at 1/64,
# 1/32 (auto) and 1/16 of the limit.
# Variants are VARIANT@MIB_PER_S, for example auto@48.

GAP_PACED_MAX=$((128 << 20))
GAP_PACED_FILE_MIB=384

scenario_setup() {
	dd if=/dev/zero of="$SCRATCH/gap-paced.dat" bs=1M \
		count="$GAP_PACED_FILE_MIB" status=none && sync
}

trial() {
	local variant=${1%@*} rate=${1#*@} lat=$SCRATCH/gap-paced.lat
	local usage=$SCRATCH/gap-paced.usage cpu0 start wall sampler rc=0
	[ "$rate" != "$1" ] || { echo "bench: $1: no @MIB_PER_S" >&2; return 1; }
	fresh_cgroup || return 1
	echo "$GAP_PACED_MAX" > "$BENCH_CG/memory.max"
	echo 3 > /proc/sys/vm/drop_caches
	set_variant "$BENCH_CG" "$variant" "$GAP_PACED_MAX" || return 1
	cpu0=$(cpu_ticks)
	start=$(now)
	run_in "$BENCH_CG" "$BIN/pacedread" "$SCRATCH/gap-paced.dat" "$rate" \
		"$lat"
	sample_usage "$BENCH_CG" > "$usage" &
	sampler=$!
	wait_workload || rc=1
	wall=$(elapsed "$start")
	kill "$sampler"
	wait "$sampler" 2> /dev/null
	[ $rc -eq 0 ] || return 1
	echo "wall_s $wall"
	echo "mib_per_s $(echo "$GAP_PACED_FILE_MIB / $wall" | bc -l)"
	echo "cpu_s $(echo "($(cpu_ticks) - $cpu0) / $(getconf CLK_TCK)" | bc -l)"
	# Usage once the cache has filled: the second half of the samples.
	echo "usage_steady_mib $(awk '{ u[NR] = $1 } END {
		for (i = int(NR / 2) + 1; i <= NR; i++) { s += u[i]; n++ }
		print n ? s / n / 1048576 : 0 }' "$usage")"
	echo "max_events $(event_of "$BENCH_CG" max)"
	reclaim_counters "$BENCH_CG"
	echo "latency_ms_file $(latency_file "$lat")"
}
