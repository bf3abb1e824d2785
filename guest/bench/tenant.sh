# What the worst watermarks a tenant can write cost everyone else: the
# tenant streams page cache through its cgroup (memory.max 64 MiB, a file
# twice that, read over and over) while one CPU-bound bystander per vCPU,
# in a sibling cgroup, counts how much work it gets done.  The
# variants are the tenant's setting: "off", "auto", and the most
# aggressive one the grammar accepts, pct-0.02-0.01 (high=0.02%
# low=0.01%: the worker is due whenever the tenant holds more than 13 KiB,
# and reclaims everything it reads); +cpumax as in lib.sh.

TENANT_MAX=$((64 << 20))
TENANT_FILE_MIB=128
TENANT_SECONDS=20

scenario_setup() {
	dd if=/dev/zero of="$SCRATCH/tenant.dat" bs=1M \
		count="$TENANT_FILE_MIB" status=none && sync
}

trial() {
	local variant=$1 tenant_cg=$BENCH_CG/tenant by_cg=$BENCH_CG/bystanders
	local cpu0 start wall i total=0 ops
	fresh_cgroup || return 1
	echo +memory > "$BENCH_CG/cgroup.subtree_control" || return 1
	mkdir "$tenant_cg" "$by_cg" || return 1
	echo "$TENANT_MAX" > "$tenant_cg/memory.max"
	echo 3 > /proc/sys/vm/drop_caches
	set_variant "$tenant_cg" "$variant" "$TENANT_MAX" || return 1
	rm -f "$SCRATCH"/spin.* "$SCRATCH/tenant.passes"
	touch "$SCRATCH/tenant.passes"
	cpu0=$(cpu_ticks)
	start=$(now)
	# One line in tenant.passes per 16 MiB read.
	run_in "$tenant_cg" sh -c 'while :; do
		for skip in $(seq 0 16 $(($3 - 16))); do
			dd if="$1" of=/dev/null bs=1M count=16 skip=$skip \
				status=none && echo >> "$2"
		done
	done' sh "$SCRATCH/tenant.dat" "$SCRATCH/tenant.passes" "$TENANT_FILE_MIB"
	local tenant=${WORKLOAD_PIDS[0]}
	WORKLOAD_PIDS=()
	# The bystanders' cgroup tells the CPU the guest gave them, which the
	# host's scheduling of the vCPUs cannot change; their work it can.
	for i in $(seq "$(nproc)"); do
		run_in "$by_cg" sh -c '"$1" "$2" > "$3"' sh "$BIN/spin" \
			"$TENANT_SECONDS" "$SCRATCH/spin.$i"
	done
	wait_workload || return 1
	wall=$(elapsed "$start")
	echo 1 > "$tenant_cg/cgroup.kill"
	wait "$tenant" 2> /dev/null
	stop_reclaimer
	for i in $(seq "$(nproc)"); do
		ops=$(cat "$SCRATCH/spin.$i")
		total=$(echo "$total + $ops" | bc -l)
	done
	echo "bystander_ops_per_s $total"
	echo "bystander_cpu_share $(echo "$(cpu_stat_of "$by_cg" usage_usec) / ($TENANT_SECONDS * $(nproc) * 1000000)" | bc -l)"
	echo "tenant_mib_per_s $(echo "$(wc -l < "$SCRATCH/tenant.passes") * 16 / $wall" | bc -l)"
	echo "tenant_cpu_s $(echo "$(cpu_stat_of "$tenant_cg" usage_usec) / 1000000" | bc -l)"
	echo "tenant_cpu_pct $(echo "$(cpu_stat_of "$tenant_cg" usage_usec) / ($wall * 10000)" | bc -l)"
	echo "worker_cpu_s $(echo "$(stat_of "$tenant_cg" bgreclaim_cpu_usec) / 1000000" | bc -l)"
	echo "worker_cpu_pct $(echo "$(stat_of "$tenant_cg" bgreclaim_cpu_usec) / ($wall * $(nproc) * 10000)" | bc -l)"
	echo "cpu_s $(echo "($(cpu_ticks) - $cpu0) / $(getconf CLK_TCK)" | bc -l)"
	reclaim_counters "$tenant_cg"
}
