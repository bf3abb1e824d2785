#!/bin/bash
# Live demonstration inside the VM: the same allocation-heavy workload in a
# memory cgroup under memory.high, once with background reclaim off and,
# when the kernel has it, with memory.reclaim_wmarks=auto, which the cgroup
# pays for under its CPU controller, and with auto under an administrator's
# cap of a tenth of a CPU (memory.reclaim_wmarks.budget); sampled once a
# second, then compared side by side.
# usage: demo.sh RESULTS_DIR MEMHOG
set -u
results=$1 memhog=$2
. "$(dirname "$0")/common.sh"

HIGH=256M NPROC=8 MIB_EACH=64 PASSES=3

stat_of() { awk -v k="$2" '$1 == k {print $2; f=1} END {if (!f) print "-"}' "$1/memory.stat"; }
event_of() { awk -v k="$2" '$1 == k {print $2}' "$1/memory.events"; }
psi_total() { sed -n "s/^$2 .*total=\([0-9]*\).*/\1/p" "$1/memory.pressure"; }

# sample_row NAME T CG: one row of the live table.  Every value is read
# with shell builtins, in quick succession: under this much pressure each
# fork takes long enough that a row read with awk mixed moments far
# apart (usage from before the first charge, counters from later).
sample_row() {
	local cg=$3 usage k v high=0 direct=- bg=- psi
	read -r usage < "$cg/memory.current"
	while read -r k v; do
		[ "$k" = high ] && high=$v
	done < "$cg/memory.events"
	while read -r k v; do
		case $k in
		pgscan_direct) direct=$v ;;
		pgscan_bgreclaim) bg=$v ;;
		esac
	done < "$cg/memory.stat"
	read -r _ psi _ < "$cg/memory.pressure"
	printf '| %-9s | %4d | %9d | %11d | %13s | %16s | %9s |\n' \
		"$1" "$2" $((usage >> 20)) "$high" "$direct" "$bg" "${psi#avg10=}"
}

# run_case NAME WMARKS [BUDGET]: run the workload in cgroup NAME, leave
# its figures in $SCRATCH/NAME.summary as "key value" lines.
run_case() {
	local name=$1 wmarks=$2 budget=${3:-} cg=/sys/fs/cgroup/$1 t=0 i start end
	mkdir -p "$cg"
	echo "$HIGH" > "$cg/memory.high"
	[ "$wmarks" = - ] || echo "$wmarks" > "$cg/memory.reclaim_wmarks"
	[ -z "$budget" ] || echo "$budget" > "$cg/memory.reclaim_wmarks.budget"
	echo "demo: cgroup $name: memory.high=$HIGH," \
		"memory.reclaim_wmarks=$wmarks${budget:+, memory.reclaim_wmarks.budget=$budget}," \
		"$NPROC processes x ${MIB_EACH} MiB x $PASSES passes, swap on zswap"
	start=$(date +%s.%N)
	for i in $(seq "$NPROC"); do
		in-cgroup "$cg" "$memhog" "$MIB_EACH" 2 "$PASSES" \
			> "$SCRATCH/$name.memhog.$i" &
	done
	printf '| %-9s | %4s | %9s | %11s | %13s | %16s | %9s |\n' cgroup "t(s)" \
		"usage MiB" "high events" "pgscan_direct" "pgscan_bgreclaim" \
		"PSI some"
	while [ -n "$(jobs -r)" ]; do
		sample_row "$name" "$t" "$cg"
		sleep 1
		t=$((t + 1))
	done
	wait
	end=$(date +%s.%N)
	{
		echo "wall_s $(echo "$end - $start" | bc)"
		echo "high_events $(event_of "$cg" high)"
		for k in pgscan_direct pgsteal_direct pgscan_kswapd pgsteal_kswapd \
			pgscan_bgreclaim pgsteal_bgreclaim bgreclaim_runs \
			bgreclaim_giveups bgreclaim_cpu_usec \
			bgreclaim_budget_exhausted; do
			echo "$k $(stat_of "$cg" "$k")"
		done
		echo "psi_some_us $(psi_total "$cg" some)"
		echo "psi_full_us $(psi_total "$cg" full)"
		# Worst per-process chunk latency percentiles.
		cat "$SCRATCH/$name".memhog.* | tr ' =' '\n ' | awk '
			$1 == "p50_ms" && $2 > p50 {p50 = $2}
			$1 == "p99_ms" && $2 > p99 {p99 = $2}
			$1 == "max_ms" && $2 > max {max = $2}
			END {print "chunk_p50_ms", p50; print "chunk_p99_ms", p99;
			     print "chunk_max_ms", max}'
	} > "$SCRATCH/$name.summary"
}

guest_setup || { guest_finish "$results" 1; exit 1; }
echo Y > /sys/module/zswap/parameters/enabled 2>/dev/null
mkdir -p /sys/fs/cgroup/probe
if [ -e /sys/fs/cgroup/probe/memory.reclaim_wmarks.budget ]; then
	cases="off auto capped"
elif [ -e /sys/fs/cgroup/probe/memory.reclaim_wmarks ]; then
	cases="off auto"
else
	cases=off
	echo "demo: this kernel has no memory.reclaim_wmarks;" \
		"showing memory.high throttling alone"
fi
rmdir /sys/fs/cgroup/probe
for c in $cases; do
	case $c in
	off) run_case off - ;;
	auto) run_case auto auto ;;
	capped) run_case capped auto "10000 100000" ;;
	esac
done

echo "demo: side by side (2 MiB chunk latencies are the worst process's):"
printf 'demo: | %-26s |' metric
for c in $cases; do printf ' %14s |' "$c"; done
echo
for k in $(awk '{print $1}' "$SCRATCH/off.summary"); do
	printf 'demo: | %-26s |' "$k"
	for c in $cases; do
		printf ' %14s |' "$(awk -v k="$k" '$1 == k {print $2}' "$SCRATCH/$c.summary")"
	done
	echo
done
guest_finish "$results" 0
