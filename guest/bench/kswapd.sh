# Node reclaim by kswapd and its helpers in the background reclaim pool
# (the 2018 multiple-kswapd test, scaled to the VM).  Most of the guest's
# memory is mlocked, so that buffered readers stream more than the rest:
# kswapd falls behind and tasks reclaim directly.  Variants:
#   pool-N        KSWAPD_READERS readers, each in its own memory cgroup,
#                 each stream their own file KSWAPD_PASSES times, with the
#                 pool's max_active at N (1 is stock kswapd, no helpers);
#   pool-N+mixed  one such reader as a memory hog in one cgroup, and one
#                 CPU-bound task that allocates nothing in another, for
#                 KSWAPD_MIXED_SECONDS;
#   pool-N+mixed+worker
#                 the same, with background reclaim on the hog's cgroup
#                 (KSWAPD_HOG_WMARKS under a memory.max the node runs out
#                 of first): its own worker beside kswapd's helpers;
#   pool-N+mglru  pool-N with MGLRU on (the others run with it off).
# kswapd's helpers are allowed (memcg_bgreclaim.kswapd_helpers) and take
# only cgroups with background reclaim on, so the readers' and the hog's
# cgroups have "auto" watermarks and no limit: they opt in, and have no
# worker of their own but in +worker, so the pool's only work is kswapd's.
# The scenarios kswapd and kswapd-icount run the streaming variants,
# kswapd-mixed and kswapd-mixed-icount the +mixed ones (more rounds); the
# -icount ones on an instruction clock (kswapd.toml).

KSWAPD_FREE_MIB=900
KSWAPD_READERS=2
KSWAPD_FILE_MIB=448
KSWAPD_PASSES=2
KSWAPD_MIXED_SECONDS=20
KSWAPD_HOG_WMARKS="high=512M low=448M"

POOL=/sys/devices/virtual/workqueue/memcg_bgreclaim/max_active
HELPERS=/sys/module/memcg_bgreclaim/parameters/kswapd_helpers
LRU_GEN=/sys/kernel/mm/lru_gen/enabled
PIN_PID=

# A machine-wide counter: from /proc/vmstat, or, for bgreclaim_cpu_usec,
# which only the memory controller keeps, from the root's memory.stat.
vmstat_of() {
	awk -v k="$1" '$1 == k {print $2; f = 1; exit} END {if (!f) print 0}' \
		/proc/vmstat /sys/fs/cgroup/memory.stat
}

# CPU time of the node's kswapd so far, in clock ticks.
kswapd_ticks() {
	awk '{print $14 + $15}' "/proc/$(pgrep -x kswapd0)/stat"
}

scenario_setup() {
	local i total pin
	[ -w "$POOL" ] || { echo "bench: no $POOL" >&2; return 1; }
	echo Y > "$HELPERS" || return 1
	for i in $(seq "$KSWAPD_READERS"); do
		dd if=/dev/zero of="$SCRATCH/kswapd.$i" bs=1M \
			count="$KSWAPD_FILE_MIB" status=none || return 1
	done
	sync
	total=$(awk '/MemTotal/ {print int($2 / 1024)}' /proc/meminfo)
	pin=$((total - KSWAPD_FREE_MIB))
	"$BIN/anonhold" "$pin" mlock > /dev/null &
	PIN_PID=$!
	# Until it has touched everything, memory is not yet short.
	while [ "$(awk '/Mlocked/ {print int($2 / 1024)}' /proc/meminfo)" -lt "$pin" ]; do
		kill -0 "$PIN_PID" || return 1
		sleep 1
	done
	echo "bench: $pin MiB mlocked, $KSWAPD_FREE_MIB MiB left" >&2
}

# stream FILE PASSES: read FILE through the page cache PASSES times.
stream() {
	local i
	for i in $(seq "$2"); do
		dd if="$1" of=/dev/null bs=1M status=none || return 1
	done
}

NODE_COUNTERS=(pgscan_kswapd pgsteal_kswapd pgscan_kswapd_helper
	pgsteal_kswapd_helper pgscan_direct pgsteal_direct pgsteal_bgreclaim
	bgreclaim_cpu_usec)

# The node-wide counters of a trial, as json() arguments.
node_counters() {
	local k
	for k in "${NODE_COUNTERS[@]}"; do
		echo "$k $(($(vmstat_of "$k") - ${VM0[$k]}))"
	done
}

declare -A VM0
snapshot() {
	local k
	for k in "${NODE_COUNTERS[@]}"; do
		VM0[$k]=$(vmstat_of "$k")
	done
	KSWAPD0=$(kswapd_ticks)
}

# reader_pos CG: the file offset of the process in CG that has one of the
# kswapd files open, if there is one.
reader_pos() {
	local pid fd
	for pid in $(cat "$1/cgroup.procs"); do
		for fd in /proc/"$pid"/fd/*; do
			case $(readlink "$fd") in
			"$SCRATCH"/kswapd.*)
				awk '$1 == "pos:" {print $2}' "/proc/$pid/fdinfo/${fd##*/}"
				return
				;;
			esac
		done
	done
}

# hog_read_mib CG: freeze the hog in CG and print the MiB it has read: its
# finished passes and how far its dd is into the next.  Finished passes
# alone would round 20 s of reading down to whole files.  Between two dd
# runs the pass count may or may not include the last one, so freeze again
# until a dd is caught.
hog_read_mib() {
	local cg=$1 pos
	for _ in $(seq 20); do
		echo 1 > "$cg/cgroup.freeze" || return 1
		for _ in $(seq 100); do
			grep -qx "frozen 1" "$cg/cgroup.events" && break
			sleep 0.01
		done
		pos=$(reader_pos "$cg")
		if [ -n "$pos" ]; then
			echo "$(wc -l < "$SCRATCH/hog.passes") * $KSWAPD_FILE_MIB + $pos / 1048576" | bc -l
			return 0
		fi
		echo 0 > "$cg/cgroup.freeze"
		sleep 0.01
	done
	echo "bench: no dd of the hog's caught reading" >&2
	return 1
}

# Pages reclaimed in the background (kswapd, its helpers and cgroups' own
# workers) per CPU-second they spent.
efficiency() {
	local ks pool stolen
	ks=$(echo "($(kswapd_ticks) - $KSWAPD0) / $(getconf CLK_TCK)" | bc -l)
	pool=$(echo "$(($(vmstat_of bgreclaim_cpu_usec) - ${VM0[bgreclaim_cpu_usec]})) / 1000000" | bc -l)
	stolen=$(($(vmstat_of pgsteal_kswapd) - ${VM0[pgsteal_kswapd]} +
		$(vmstat_of pgsteal_bgreclaim) - ${VM0[pgsteal_bgreclaim]}))
	echo "kswapd_cpu_s $ks"
	echo "pool_cpu_s $pool"
	echo "pages_per_cpu_s $(echo "$stolen / ($ks + $pool + 0.001)" | bc -l)"
}

trial() {
	local variant=$1 bound mixed= worker= lru_gen=n cpu0 start wall i
	bound=${variant#pool-}
	case $bound in
	*+mixed+worker) bound=${bound%+mixed+worker}; mixed=1; worker=1 ;;
	*+mixed) bound=${bound%+mixed}; mixed=1 ;;
	*+mglru) bound=${bound%+mglru}; lru_gen=y ;;
	esac
	fresh_cgroup || return 1
	echo +memory > "$BENCH_CG/cgroup.subtree_control" || return 1
	echo "$bound" > "$POOL" || return 1
	if [ "$lru_gen" = y ] || [ -w "$LRU_GEN" ]; then
		echo "$lru_gen" > "$LRU_GEN" || return 1
	fi
	sync
	echo 3 > /proc/sys/vm/drop_caches
	snapshot
	cpu0=$(cpu_ticks)
	start=$(now)
	if [ -z "$mixed" ]; then
		for i in $(seq "$KSWAPD_READERS"); do
			mkdir "$BENCH_CG/r$i" &&
				echo auto > "$BENCH_CG/r$i/memory.reclaim_wmarks" ||
				return 1
			run_in "$BENCH_CG/r$i" bash -c "$(declare -f stream);
				stream $SCRATCH/kswapd.$i $KSWAPD_PASSES"
		done
		wait_workload || return 1
		wall=$(elapsed "$start")
		echo "wall_s $wall"
		echo "mib_per_s $(echo "$KSWAPD_READERS * $KSWAPD_FILE_MIB * $KSWAPD_PASSES / $wall" | bc -l)"
	else
		mkdir "$BENCH_CG/hog" "$BENCH_CG/cpu" &&
			echo auto > "$BENCH_CG/hog/memory.reclaim_wmarks" || return 1
		if [ -n "$worker" ]; then
			echo 1G > "$BENCH_CG/hog/memory.max" &&
				echo "$KSWAPD_HOG_WMARKS" > "$BENCH_CG/hog/memory.reclaim_wmarks" ||
				return 1
		fi
		rm -f "$SCRATCH/hog.passes"
		touch "$SCRATCH/hog.passes"
		run_in "$BENCH_CG/hog" bash -c "while :; do
			for f in $SCRATCH/kswapd.*; do
				dd if=\$f of=/dev/null bs=1M status=none &&
					echo >> $SCRATCH/hog.passes
			done
		done"
		local hog=${WORKLOAD_PIDS[0]}
		WORKLOAD_PIDS=()
		run_in "$BENCH_CG/cpu" sh -c "'$BIN/spin' $KSWAPD_MIXED_SECONDS > $SCRATCH/spin.out"
		wait_workload || return 1
		wall=$(elapsed "$start")
		local read_mib
		read_mib=$(hog_read_mib "$BENCH_CG/hog") || return 1
		echo 1 > "$BENCH_CG/hog/cgroup.kill"
		wait "$hog" 2> /dev/null
		echo "wall_s $wall"
		echo "spin_ops_per_s $(cat "$SCRATCH/spin.out")"
		# The CPU the guest's scheduler gave the task, apart from how
		# fast the host ran its vCPU.
		echo "spin_cpu_share $(echo "$(cpu_stat_of "$BENCH_CG/cpu" usage_usec) / ($KSWAPD_MIXED_SECONDS * 1000000)" | bc -l)"
		echo "mib_per_s $(echo "$read_mib / $wall" | bc -l)"
		echo "hog_bgreclaim_cpu_pct $(echo "$(stat_of "$BENCH_CG/hog" bgreclaim_cpu_usec) / ($wall * 10000)" | bc -l)"
	fi
	echo "cpu_s $(echo "($(cpu_ticks) - $cpu0) / $(getconf CLK_TCK)" | bc -l)"
	node_counters
	efficiency
}
