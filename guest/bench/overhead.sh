# Fast-path overhead: a page-fault-heavy loop in a cgroup far below its
# limit, so that reclaim never runs and only the charge path is measured.

OVERHEAD_MAX=$((1 << 30))
OVERHEAD_MIB=64
OVERHEAD_SECONDS=3

scenario_setup() {
	echo never > /sys/kernel/mm/transparent_hugepage/enabled
}

trial() {
	local variant=$1 out
	fresh_cgroup || return 1
	echo "$OVERHEAD_MAX" > "$BENCH_CG/memory.max"
	set_variant "$BENCH_CG" "$variant" "$OVERHEAD_MAX" || return 1
	out=$(in-cgroup "$BENCH_CG" "$BIN/faultloop" "$OVERHEAD_MIB" \
		"$OVERHEAD_SECONDS") || return 1
	stop_reclaimer
	echo "$out" | tr ' =' '\n ' | grep .
	echo "bgreclaim_runs $(stat_of "$BENCH_CG" bgreclaim_runs)"
}
