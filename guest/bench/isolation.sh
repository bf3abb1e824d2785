# Isolation: a latency-sensitive task and a bulk file copy in sibling
# cgroups under a parent with memory.max.  The latency task's memory is
# protected with memory.low, as an operator would; background reclaim (or
# the user-space reclaimer) works on the parent.  Variant "alone" runs the
# latency task without the copy, for reference.

ISO_MAX=$((256 << 20))
ISO_LOW=$((96 << 20))
ISO_RESIDENT_MIB=64
ISO_SECONDS=20
ISO_FILE_MIB=384

scenario_setup() {
	dd if=/dev/zero of="$SCRATCH/iso.src" bs=1M count="$ISO_FILE_MIB" \
		status=none && sync
}

# Copy the file again and again until killed.
copy_loop() {
	while :; do
		cp "$SCRATCH/iso.src" "$SCRATCH/iso.dst" || return 1
	done
}

trial() {
	local variant=$1 lat=$SCRATCH/iso.lat copier= setting=$1
	fresh_cgroup || return 1
	echo "$ISO_MAX" > "$BENCH_CG/memory.max"
	echo +memory > "$BENCH_CG/cgroup.subtree_control"
	mkdir "$BENCH_CG/latency" "$BENCH_CG/copy" || return 1
	echo "$ISO_LOW" > "$BENCH_CG/latency/memory.low"
	[ "$variant" = alone ] && setting=off
	set_variant "$BENCH_CG" "$setting" "$ISO_MAX" || return 1
	echo 3 > /proc/sys/vm/drop_caches
	if [ "$variant" != alone ]; then
		in-cgroup "$BENCH_CG/copy" bash -c "$(declare -f copy_loop); SCRATCH=$SCRATCH copy_loop" &
		copier=$!
		sleep 2
	fi
	run_in "$BENCH_CG/latency" "$BIN/latprobe" "$ISO_RESIDENT_MIB" \
		"$ISO_SECONDS" "$lat" > /dev/null
	wait_workload || return 1
	if [ -n "$copier" ]; then
		echo 1 > "$BENCH_CG/copy/cgroup.kill"
		wait "$copier"
	fi
	stop_reclaimer
	echo "latency_us_file $(latency_file "$lat")"
	echo "latency_pgscan_direct $(stat_of "$BENCH_CG/latency" pgscan_direct)"
	echo "copy_pgscan_direct $(stat_of "$BENCH_CG/copy" pgscan_direct)"
	echo "max_events $(event_of "$BENCH_CG" max)"
	reclaim_counters "$BENCH_CG"
	rm -f "$SCRATCH/iso.dst"
}
