# Shared helpers for the benchmark scenarios (sourced after ../common.sh).
# A scenario script runs ROUNDS rounds; each round runs every variant once,
# in order (A B C A B C ...), and appends one JSON object per trial to
# $RESULTS/trials.jsonl.  The host computes medians, spreads and targets.

BENCH_CG=/sys/fs/cgroup/bench

# Does this kernel have memory cgroup background reclaim?
have_bgreclaim() {
	mkdir -p "$BENCH_CG.probe" &&
		[ -e "$BENCH_CG.probe/memory.reclaim_wmarks" ]
	local found=$?
	rmdir "$BENCH_CG.probe"
	return $found
}

# Non-idle CPU time of the whole guest (tasks, kworkers, interrupts), in
# clock ticks.
cpu_ticks() {
	awk '$1 == "cpu" {print $2 + $3 + $4 + $7 + $8 + $9}' /proc/stat
}

stat_of() { awk -v k="$2" '$1 == k {print $2; f = 1} END {if (!f) print 0}' "$1/memory.stat"; }
event_of() { awk -v k="$2" '$1 == k {print $2}' "$1/memory.events"; }
psi_some_us() { sed -n 's/^some .*total=\([0-9]*\).*/\1/p' "$1/memory.pressure"; }
cpu_stat_of() { awk -v k="$2" '$1 == k {print $2}' "$1/cpu.stat"; }

# The watermarks "auto" gives a limit (see memory.reclaim_wmarks in
# Documentation/admin-guide/cgroup-v2.rst): the user-space reclaimer keeps
# the same targets, so the two compete on how, not on where.
auto_high() { local l=$1 g; g=$(auto_gap "$l"); echo $((l - g)); }
auto_low() { local l=$1 g; g=$(auto_gap "$l"); echo $((l - 2 * g)); }
auto_gap() {
	local l=$1 g=$(($1 / 32)) mib=$((1 << 20))
	[ $g -lt $((2 * mib)) ] && g=$((2 * mib))
	[ $g -gt $((1024 * mib)) ] && g=$((1024 * mib))
	[ $g -gt $((l / 4)) ] && g=$((l / 4))
	echo "$g"
}

# set_variant CGROUP VARIANT LIMIT_BYTES: configure background reclaim for
# VARIANT: "off", "userspace" (starts psi-reclaimer, PID in RECLAIMER_PID),
# "auto", or "pct-H-L" for "high=H% low=L%" (no spaces: variant names
# travel on the guest's command line), each with optional suffixes:
#   +cpumax  the cgroup limited to VARIANT_CPU_MAX of one CPU (cpu.max),
#            its tasks and its worker together.
VARIANT_CPU_MAX="25000 100000"
RECLAIMER_PID=
set_variant() {
	local cg=$1 variant=${2%%+*} limit=$3 opt
	RECLAIMER_PID=
	for opt in $(echo "${2#"$variant"}" | tr + ' '); do
		case $opt in
		cpumax)
			echo +cpu > "${cg%/*}/cgroup.subtree_control" &&
				echo "$VARIANT_CPU_MAX" > "$cg/cpu.max" || return 1
			;;
		*)
			echo "bench: unknown variant option +$opt" >&2
			return 1
			;;
		esac
	done
	case $variant in
	off | base) ;;
	userspace)
		start_agent "$cg" "$(auto_high "$limit")" "$(auto_low "$limit")" ||
			return 1
		;;
	auto)
		echo auto > "$cg/memory.reclaim_wmarks" || return 1
		;;
	pct-*-*)
		local h=${variant#pct-}
		echo "high=${h%-*}% low=${h#*-}%" > "$cg/memory.reclaim_wmarks" ||
			return 1
		;;
	*)
		echo "bench: unknown variant $variant" >&2
		return 1
		;;
	esac
}

# start_agent CGROUP HIGH LOW: psi-reclaimer keeping CGROUP between the
# watermarks, from a cgroup of its own whose cpu.max is CGROUP's (max
# unless +cpumax set one): the agent may use the CPU the worker may, and
# the CPU it took is reported as agent_cpu_s by reclaim_counters.
AGENT_CG=/sys/fs/cgroup/bench-agent
AGENT_USEC0=
start_agent() {
	local cg=$1
	mkdir -p "$AGENT_CG" &&
		echo +cpu > /sys/fs/cgroup/cgroup.subtree_control || return 1
	if [ -e "$cg/cpu.max" ]; then
		cat "$cg/cpu.max"
	else
		echo max
	fi > "$AGENT_CG/cpu.max" || return 1
	AGENT_USEC0=$(cpu_stat_of "$AGENT_CG" usage_usec)
	in-cgroup "$AGENT_CG" "$BIN/psi-reclaimer" "$cg" "$2" "$3" \
		> "$SCRATCH/reclaimer.out" &
	RECLAIMER_PID=$!
}

stop_reclaimer() {
	[ -n "$RECLAIMER_PID" ] || return 0
	kill -TERM "$RECLAIMER_PID"
	wait "$RECLAIMER_PID"
	RECLAIMER_PID=
}

# json KEY VALUE...: one JSON object; values that look like numbers are
# written as numbers, the rest as strings.
json() {
	local sep= out="{"
	local v
	while [ $# -ge 2 ]; do
		v=$2
		if [[ $v =~ ^-?[0-9]*(\.[0-9]+)?$ && $v =~ [0-9] ]]; then
			[[ $v == .* ]] && v=0$v
			[[ $v == -.* ]] && v=-0${v#-}
			out+="$sep\"$1\": $v"
		else
			out+="$sep\"$1\": \"$2\""
		fi
		sep=", "
		shift 2
	done
	echo "$out}"
}

# reclaim_counters CGROUP: the per-reclaimer counters as json() arguments,
# pgsteal_all, what every reclaimer took from CGROUP together (how much
# the trial pressed on its limit, whoever relieved it), and the refaults
# (how much of that was taken before it was done with).
reclaim_counters() {
	local k
	for k in pgscan_direct pgsteal_direct pgscan_kswapd pgsteal_kswapd \
		pgscan_bgreclaim pgsteal_bgreclaim bgreclaim_runs \
		bgreclaim_giveups bgreclaim_thrashing bgreclaim_cpu_usec \
		workingset_refault_anon workingset_refault_file; do
		echo "$k $(stat_of "$1" "$k")"
	done
	echo "pgsteal_all $(($(stat_of "$1" pgsteal_direct) + \
		$(stat_of "$1" pgsteal_kswapd) + $(stat_of "$1" pgsteal_bgreclaim)))"
	[ -z "$AGENT_USEC0" ] ||
		echo "agent_cpu_s $(echo "($(cpu_stat_of "$AGENT_CG" usage_usec) - \
			$AGENT_USEC0) / 1000000" | bc -l)"
}

# fresh_cgroup: an empty $BENCH_CG, the previous one removed.
fresh_cgroup() {
	remove_cgroup "$BENCH_CG"
	mkdir "$BENCH_CG"
}

remove_cgroup() {
	local cg=$1 child
	[ -d "$cg" ] || return 0
	for child in "$cg"/*/; do
		[ -d "$child" ] && remove_cgroup "${child%/}"
	done
	echo 1 > "$cg/cgroup.kill" 2>/dev/null
	for _ in $(seq 50); do rmdir "$cg" 2>/dev/null && return 0; sleep 0.1; done
	echo "bench: cannot remove $cg" >&2
	return 1
}

# run_in CGROUP CMD...: run CMD inside CGROUP, in the background, as part
# of the trial's workload.  Its output is dropped: a workload left running
# must not hold the trial's output pipe open.
WORKLOAD_PIDS=()
run_in() {
	local cg=$1
	shift
	in-cgroup "$cg" "$@" > /dev/null &
	WORKLOAD_PIDS+=($!)
}

# run_held CGROUP CMD...: run_in, but CMD stops itself first and waits for
# release_held.  Workloads of several processes start them this way, all
# at once: forked one by one, short processes may each finish before the
# next starts and never press on the cgroup together.
run_held() {
	local cg=$1
	shift
	run_in "$cg" sh -c 'kill -STOP $$; exec "$@"' sh "$@"
}

# release_held: once every workload process has stopped, continue them.
release_held() {
	local pid state
	for pid in "${WORKLOAD_PIDS[@]}"; do
		while kill -0 "$pid" 2> /dev/null; do
			read -r _ _ state _ < "/proc/$pid/stat"
			[ "$state" = T ] && break
			sleep 0.01
		done
	done
	kill -CONT "${WORKLOAD_PIDS[@]}" 2> /dev/null
}

# Wait for the workload (not the reclaimer); fail if any part failed.
wait_workload() {
	local pid rc=0
	for pid in "${WORKLOAD_PIDS[@]}"; do
		wait "$pid" || rc=1
	done
	WORKLOAD_PIDS=()
	return $rc
}

# latency_file FILE: keep FILE with the results as latency/$TRIAL_ID.txt
# and print that name, for the host to compute percentiles.
latency_file() {
	mkdir -p "$RESULTS/latency"
	cp "$1" "$RESULTS/latency/$TRIAL_ID.txt" || return 1
	echo "latency/$TRIAL_ID.txt"
}

# sample_usage CG: memory.current of CG every 100 ms until killed (read
# without forking, so the sampler costs the guest next to nothing).
sample_usage() {
	local v
	while read -r v < "$1/memory.current"; do
		echo "$v"
		sleep 0.1
	done
}

now() { date +%s.%N; }
elapsed() { echo "$(now) - $1" | bc; }

# Lock statistics, on a kernel with /proc/lock_stat (the scenarios that
# declare config = "lockstat"); elsewhere both do nothing.  Start clears
# the table and starts counting; stop keeps the table as
# lockstat/$TRIAL_ID.txt and prints that name, for the host to read
# where tasks waited for locks while the workload ran.
LOCK_STAT=/proc/lock_stat

lock_stats_start() {
	[ -e "$LOCK_STAT" ] || return 0
	echo 0 > "$LOCK_STAT" && echo 1 > /proc/sys/kernel/lock_stat
}

lock_stats_stop() {
	[ -e "$LOCK_STAT" ] || return 0
	echo 0 > /proc/sys/kernel/lock_stat
	mkdir -p "$RESULTS/lockstat"
	cp "$LOCK_STAT" "$RESULTS/lockstat/$TRIAL_ID.txt" || return 1
	echo "lock_stat_file lockstat/$TRIAL_ID.txt"
}
