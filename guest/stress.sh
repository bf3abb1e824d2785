#!/bin/bash
# Races and lifecycle of memory cgroup background reclaim, as TAP results
# ("# selftests: cgroup: stress-PHASE" and ok / not ok) for the harness.
# Each phase stresses one interaction while workers are queued or running;
# after each, the phase's cgroups must go away completely (the parent's
# nr_dying_descendants back to 0) and no worker run may be left in flight
# (every traced run start has its end).  The host scans the console for
# splats.
# usage: stress.sh BIN_DIR CYCLES SECONDS [PHASE...]
#   CYCLES: create/remove cycles of the churn phases; SECONDS: length of
#   each timed phase; PHASEs: some of churn rewrite freeze swapoff oom
#   hotplug (the default), and kswapd, kswapd-target and helpers-off,
#   which run only when named: they need 4 vCPUs and half a minute for
#   kswapd's helpers to run at all (on a 2-vCPU debug guest in 10 s there
#   was no node pressure).
#   With STRESS_CONTROL=1 every watermark written is "off": the same
#   stress without background reclaim, to tell the series' problems from
#   the base kernel's.
set -u
BIN=$1 CYCLES=$2 SECONDS_EACH=$3
. "$(dirname "$0")/common.sh"
shift 3
PHASES=${*:-churn rewrite freeze swapoff oom hotplug}
wmarks() { if [ "${STRESS_CONTROL:-0}" = 1 ]; then echo off; else echo "$1"; fi; }
PARENT=/sys/fs/cgroup/stress
TRACE=/sys/kernel/tracing
DATA=${SCRATCH:-/tmp}/stress

mkdir -p "$DATA"
DATA_FS=$(findmnt -n -o TARGET --target "$DATA")
mountpoint -q "$TRACE" || mount -t tracefs none "$TRACE"

# Turning an event on or off patches kernel text, which has oopsed guests
# under QEMU's multi-threaded TCG: the harness turns these on at boot
# (trace_event=), and only the events found off are turned on here, and
# off again at the end.
TRACE_TURNED_ON=
trace_events() {
	local ev file
	if [ "$1" = 1 ]; then
		for ev in queue begin end; do
			file=$TRACE/events/vmscan/mm_vmscan_memcg_bgreclaim_$ev/enable
			[ "$(cat "$file")" = 1 ] && continue
			echo 1 > "$file" && TRACE_TURNED_ON="$TRACE_TURNED_ON $file"
		done
	else
		for file in $TRACE_TURNED_ON; do
			echo 0 > "$file"
		done
		TRACE_TURNED_ON=
	fi
}

# child NAME MAX WMARKS: a child of $PARENT with a limit and watermarks.
child() {
	local cg=$PARENT/$1
	mkdir "$cg" && echo "$2" > "$cg/memory.max" &&
		wmarks "$3" > "$cg/memory.reclaim_wmarks" && echo "$cg"
}

# run_in CGROUP COMMAND...: COMMAND in the background, in CGROUP or not
# at all, and back only once it is in CGROUP (or gone).  A task that
# missed its cgroup would run on outside it, out of reach of
# kill_and_remove, and settle()'s wait would never end.  It missed it when
# the cgroup was killed and removed before the task had moved (under node
# pressure a child can take seconds to run its first command).
run_in() {
	local cg=$1 pid
	shift
	in-cgroup "$cg" "$@" &
	pid=$!
	for _ in $(seq 200); do
		grep -qx "$pid" "$cg/cgroup.procs" 2>/dev/null && return 0
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.05
	done
}

kill_and_remove() {
	local cg=$1
	echo 1 > "$cg/cgroup.kill" 2>/dev/null
	for _ in $(seq 100); do
		rmdir "$cg" 2>/dev/null && return 0
		sleep 0.05
	done
	echo "stress: cannot remove $cg: $(cat "$cg/cgroup.procs" | wc -l) tasks left"
	return 1
}

dying() {
	awk '$1 == "nr_dying_descendants" {print $2}' "$PARENT/cgroup.stat"
}

# The CPUs online now, one per line, from a list such as "0,2-3".
online_cpus() {
	local range
	for range in $(tr ',' ' ' < /sys/devices/system/cpu/online); do
		seq "${range%-*}" "${range#*-}"
	done
}

# Replace what each CPU's charge cache holds by a charge from $CHARGER, a
# cgroup outside $PARENT.
recharge_cpus() {
	local cpu
	mkdir -p "$CHARGER"
	for cpu in $(online_cpus); do
		in-cgroup "$CHARGER" taskset -c "$cpu" "$BIN/memhog" 2 1 1 \
			> /dev/null
	done
}
CHARGER=/sys/fs/cgroup/stress-charger

# Every phase ends here: its cgroups are gone, no more dying cgroups are
# left than before it, and every worker run that started has ended.  Dead
# cgroups stay pinned by things the base kernel releases lazily, all of
# which are released before judging:
# - page cache (reclaimed here);
# - inodes attached to their writeback domain (sync and drop the inode
#   cache);
# - swap slots parked in per-CPU caches (swapoff and swapon drains them,
#   from the second round: when it came at the tenth, the phases that
#   needed it, one in three in CI, waited 25 s for it);
# - the per-CPU charge caches, each of which keeps a reference to the last
#   cgroup charged on its CPU until a charge from another cgroup replaces
#   it or the CPU goes offline, which the drains at cgroup removal can miss
#   (recharge_cpus replaces them);
# - file system metadata blocks a dead cgroup's task read first, which are
#   charged to it and which ext4's journal holds until it checkpoints them
#   (freezing the file system checkpoints the journal).
# The last two kept a dead cgroup for over a minute in about one hotplug
# phase in ten on the debug kernel, with background reclaim off as well.
# (Zombies pin dead cgroups too: guest/reap.py reaps the orphans the
# guest's init leaves.)
settle() {
	local now queued begins ends i
	wait 2>/dev/null
	rm -f "$DATA"/*
	for i in $(seq 60); do
		now=$(dying)
		[ "$now" -le "$DYING_BEFORE" ] && break
		echo 1G > "$PARENT/memory.reclaim" 2>/dev/null
		sync
		echo 3 > /proc/sys/vm/drop_caches
		[ "$i" -eq 2 ] && swapoff /dev/vdb && swapon /dev/vdb
		recharge_cpus
		fsfreeze -f "$DATA_FS" 2>/dev/null && fsfreeze -u "$DATA_FS"
		sleep 1
	done
	[ "$i" -gt 1 ] && echo "stress: $i rounds of releasing what the base kernel holds"
	sleep 1
	queued=$(grep -c mm_vmscan_memcg_bgreclaim_queue "$TRACE/trace")
	begins=$(grep -c mm_vmscan_memcg_bgreclaim_begin "$TRACE/trace")
	ends=$(grep -c mm_vmscan_memcg_bgreclaim_end "$TRACE/trace")
	echo "stress: $queued worker runs queued, $begins run, dying cgroups $DYING_BEFORE before, $now after"
	if [ "$begins" -ne "$ends" ]; then
		echo "stress: $begins runs started but $ends ended"
		return 1
	fi
	# The phase stressed background reclaim only if a worker was queued
	# (churn removes most cgroups before their worker starts); with every
	# watermark off, none may be.
	if [ "${STRESS_CONTROL:-0}" = 1 ] && [ $((queued + begins)) -gt 0 ]; then
		echo "stress: worker runs with every watermark off"
		return 1
	fi
	if [ "${STRESS_CONTROL:-0}" != 1 ] && [ "$WORKER_RUNS" = yes ] &&
	   [ $((queued + begins)) -eq 0 ]; then
		echo "stress: no worker queued: background reclaim was not stressed"
		return 1
	fi
	if [ "$now" -gt "$DYING_BEFORE" ]; then
		echo $((now - DYING_BEFORE)) > "$EXTRA"
		echo "stress: $((now - DYING_BEFORE)) more dying cgroups than before the phase"
		# Clues to what pins them: what is still charged below the
		# parent (it has no live children now) and unreaped zombies.
		# Charged slab alone does not pin a cgroup; zombies do.
		echo "stress: still charged below $PARENT:" $(awk '$2 != 0 &&
			$1 ~ /^(anon|file|kernel|kernel_stack|pagetables|sock|shmem|slab|percpu|swapcached)$/' \
			"$PARENT/memory.stat") "swap $(cat "$PARENT/memory.swap.current");" \
			"zombie processes: $(ps -eo stat= | grep -c '^Z')"
		return 2
	fi
}

# A phase still running after STALL_SECONDS has likely stalled (in CI the
# longest takes about 400 s): say once, on the console, where the user
# tasks and any task in uninterruptible sleep wait, with the kernel stacks
# of those in the stress cgroups.  A guest killed for its time leaves only
# the tail of its console to tell why.
STALL_SECONDS=$((10 * SECONDS_EACH + 300))
stall_report() {
	local pid
	echo "stress: phase $1 still running after ${STALL_SECONDS}s; tasks:"
	ps -eo pid=,stat=,wchan:32=,etime=,args= |
		awk '$2 ~ /^D/ || $5 !~ /^\[/' | cut -c1-160
	for pid in $(cat "$PARENT"/*/cgroup.procs 2>/dev/null); do
		echo "stress: kernel stack of $pid ($(cat "/proc/$pid/comm")):"
		cat "/proc/$pid/stack"
	done
}

# phase NAME FUNCTION [no-worker]: one TAP result, when NAME is selected.
# A worker must have been queued in the phase, unless no-worker says that
# its cgroups have no watermarks (they stress something else).  When the
# phase leaves more dying cgroups than it found, it runs once more with
# background reclaim off: the base kernel pins some dead cgroups for longer
# than a test can wait, and only an excess over that is the series' fault;
# so are cgroups that are still dying when the control run has ended (ones
# freed by then were released late, not leaked).  The phase's output goes
# to a file, not to $(...)'s pipe: a task the phase left running would
# keep the pipe open and the script waiting for it forever (a reader of a
# trace event the kernel lacked hung a whole guest run so).  It still runs
# in a $(...), where bash prints no notice of the tasks it killed.
PHASE_OUT=/tmp/stress-phase-out
n=0
phase() {
	local name=$1 out rc control crc before watcher
	[[ " $PHASES " == *" $name "* ]] || return 0
	WORKER_RUNS=yes
	[ "${3:-}" = no-worker ] && WORKER_RUNS=no
	n=$((n + 1))
	echo "# selftests: cgroup: stress-$name"
	before=$(dying)
	(sleep "$STALL_SECONDS" && stall_report "$name" > /dev/console 2>&1) 2> /dev/null &
	watcher=$!
	rc=$(run_phase "$2" > "$PHASE_OUT" 2>&1; echo $?)
	pkill -P "$watcher"
	kill "$watcher" 2>/dev/null
	out=$(cat "$PHASE_OUT")
	echo "$out" | sed 's/^/# /'
	if [ $rc -eq 2 ] && [ "${STRESS_CONTROL:-0}" != 1 ]; then
		crc=$(STRESS_CONTROL=1 run_phase "$2" > "$PHASE_OUT" 2>&1; echo $?)
		control=$(cat "$PHASE_OUT")
		echo "$control" | sed 's/^/# control (off): /'
		if [ $crc -eq 1 ]; then
			echo "# the control run failed: nothing to judge by"
		elif [ "$(cat "$EXTRA")" -ge "$(echo "$out" | sed -n 's/.*: \([0-9]*\) more dying.*/\1/p')" ]; then
			echo "# the base kernel leaves as many behind: not the series' doing"
			rc=0
		elif [ "$(dying)" -le "$before" ]; then
			echo "# the phase's dying cgroups were freed during the control run: released late, not leaked"
			rc=0
		else
			echo "# $(($(dying) - before)) dying cgroups left after the control run, which left $(cat "$EXTRA") more than it found: the series' doing"
		fi
	fi
	if [ $rc -eq 0 ]; then
		echo "ok $n selftests: cgroup: stress-$name"
	elif [ $rc -eq 3 ]; then
		echo "ok $n selftests: cgroup: stress-$name # SKIP what it stresses never ran"
	else
		echo "not ok $n selftests: cgroup: stress-$name # exit=$rc"
	fi
}

# run_phase FUNCTION: 0 when clean, 2 when only dying cgroups are left over
# (their number in $EXTRA), 3 when clean but FUNCTION found nothing to
# stress, 1 for anything else.
EXTRA=/tmp/stress-extra
run_phase() {
	local rc
	echo > "$TRACE/trace"
	DYING_BEFORE=$(dying)
	echo 0 > "$EXTRA"
	"$1"
	rc=$?
	[ $rc -eq 0 ] || [ $rc -eq 3 ] || return 1
	settle || return
	return $rc
}

# Create a cgroup, start filling its page cache past the high watermark,
# and remove it while its worker is queued or running (guest/progs/cgchurn.c).
churn() {
	"$BIN/cgchurn" "$PARENT" "$DATA" "$CYCLES" "$(wmarks "high=50% low=40%")"
}

# Rewrite the limits and the watermarks in a tight loop while a writer
# keeps the worker busy.
rewrite() {
	local cg end writes=0 wm
	cg=$(child rewrite 32M auto) || return 1
	echo 0 > "$cg/memory.swap.max"
	run_in "$cg" sh -c 'while :; do dd if=/dev/zero of="$1" bs=1M count=64 status=none; done' \
		sh "$DATA/rewrite"
	end=$((SECONDS + SECONDS_EACH))
	while [ $SECONDS -lt $end ]; do
		for wm in off auto "high=90% low=50%" "high=20M low=1M" \
			"high=99.99% low=0.01%"; do
			wmarks "$wm" > "$cg/memory.reclaim_wmarks" || return 1
			echo $(((RANDOM % 24 + 8) << 20)) > "$cg/memory.high"
			echo $(((RANDOM % 24 + 16) << 20)) > "$cg/memory.max" 2>/dev/null
			writes=$((writes + 3))
		done
	done
	echo "stress: $writes writes to memory.reclaim_wmarks, .high and .max"
	kill_and_remove "$cg"
}

# Freeze and thaw a cgroup whose worker swaps it out, then kill it.
freeze() {
	local cg end cycles=0
	cg=$(child freeze 64M "high=50% low=25%") || return 1
	run_in "$cg" "$BIN/anonhold" 48
	end=$((SECONDS + SECONDS_EACH))
	while [ $SECONDS -lt $end ]; do
		echo 1 > "$cg/cgroup.freeze"
		sleep 0.1
		echo 0 > "$cg/cgroup.freeze"
		sleep 0.1
		cycles=$((cycles + 1))
	done
	echo 1 > "$cg/cgroup.freeze"
	echo "stress: $cycles freeze/thaw cycles, then cgroup.kill while frozen"
	kill_and_remove "$cg"
}

# Turn swap off and on while the worker swaps a cgroup out.
swapoff_phase() {
	local cg end cycles=0
	cg=$(child swap 64M "high=50% low=25%") || return 1
	run_in "$cg" "$BIN/memhog" 48 1 1000
	end=$((SECONDS + SECONDS_EACH))
	while [ $SECONDS -lt $end ]; do
		timeout 60 swapoff /dev/vdb ||
			{ echo "stress: swapoff failed or took over 60 s"; return 1; }
		sleep 0.2
		swapon /dev/vdb || return 1
		sleep 0.5
		cycles=$((cycles + 1))
	done
	echo "stress: $cycles swapoff/swapon cycles"
	kill_and_remove "$cg"
}

# OOM kills inside a cgroup whose worker is running.
oom() {
	local i cg kills
	cg=$(child oom 32M "high=50% low=40%") || return 1
	echo 0 > "$cg/memory.swap.max"
	for i in $(seq 5); do
		run_in "$cg" "$BIN/memhog" 64 1 1
		wait $! && { echo "stress: memhog $i was not OOM-killed"; return 1; }
	done
	kills=$(awk '$1 == "oom_kill" {print $2}' "$cg/memory.events")
	echo "stress: $kills OOM kills"
	[ "$kills" -ge 5 ] || return 1
	kill_and_remove "$cg"
}

# Take a CPU offline and online while cgroups come and go and a writer
# keeps a worker busy (churn alone removed every cgroup before its worker
# was queued in about one phase in seven on the debug kernel).
hotplug() {
	local cpu=/sys/devices/system/cpu/cpu1/online end cycles=0 churner cg rc=0
	if [ ! -w "$cpu" ]; then
		echo "stress: no CPU that can go offline"
		return 1
	fi
	cg=$(child hotplug 32M "high=50% low=25%") || return 1
	echo 0 > "$cg/memory.swap.max"
	run_in "$cg" sh -c 'while :; do dd if=/dev/zero of="$1" bs=1M count=64 status=none; done' \
		sh "$DATA/hotplug"
	CYCLES=$((CYCLES / 2)) churn > /dev/null &
	churner=$!
	end=$((SECONDS + SECONDS_EACH))
	while [ $SECONDS -lt $end ] && [ $rc -eq 0 ]; do
		echo 0 > "$cpu" || rc=1
		sleep 0.3
		echo 1 > "$cpu" || rc=1
		sleep 0.3
		cycles=$((cycles + 1))
	done
	wait $churner || { echo "stress: churn failed during hotplug"; rc=1; }
	echo "stress: $cycles offline/online cycles of cpu1"
	kill_and_remove "$cg" || rc=1
	return $rc
}

vmstat_of() { awk -v k="$1" '$1 == k {print $2}' /proc/vmstat; }
mlocked_mib() { awk '/Mlocked/ {print int($2 / 1024)}' /proc/meminfo; }

# Whether kswapd has scanned a page since node_pressure began.
kswapd_scanned() { [ "$(vmstat_of pgscan_kswapd)" -ne "$SCANNED" ]; }

# Each task in uninterruptible sleep, and each kswapd, with its kernel stack.
show_waiters() {
	local stat pid comm state
	for stat in /proc/[0-9]*/stat; do
		read -r pid comm state _ < "$stat" 2> /dev/null || continue
		case $comm:$state in
		\(kswapd*|*:D)
			echo "stress: $pid $comm in state $state, at:"
			sed 's/^/stress:   /' "/proc/$pid/stack" 2> /dev/null ;;
		esac
	done
}

# node_pressure WMARKS ALLOW: node reclaim while kswapd's helpers in the
# pool are allowed (ALLOW Y) or as they are by default (ALLOW default; the
# boot command line does not set memcg_bgreclaim.kswapd_helpers).  Most
# memory is mlocked, and
# tasks in three child cgroups with WMARKS in memory.reclaim_wmarks (the
# third under a memory.max, so that its own worker runs too) rewrite and
# read files past the rest: writers that wait for writeback leave CPUs
# idle for helpers, and their dirty pages slow kswapd down.  Meanwhile the
# cgroups are killed and recreated, the pool's bound changes and MGLRU is
# switched on and off, so that helpers run with both LRUs and across the
# switch.  With READ_ONLY=1 the files are holes, which the tasks only
# read: clean page cache that comes as fast as it can be allocated, with
# no I/O to wait for; and MGLRU stays on.  With UNTIL=COMMAND it goes on
# past SECONDS, up to UNTIL_TIMES (3) times as long, until COMMAND
# succeeds.  Sets SCANNED and HELPED, the pages kswapd and its helpers
# scanned.
node_pressure() {
	local wm=$1 allowing=$2 pool=/sys/devices/virtual/workqueue/memcg_bgreclaim/max_active
	local lru_gen=/sys/kernel/mm/lru_gen/enabled lru_gen0=
	local allow=/sys/module/memcg_bgreclaim/parameters/kswapd_helpers
	local bound allowed used pin pinner pinned i end last direct cycles=0 rc=0
	bound=$(cat "$pool") && allowed=$(cat "$allow") || return 1
	[ -w "$lru_gen" ] && lru_gen0=$(cat "$lru_gen")
	for i in 1 2 3; do
		if [ "${READ_ONLY:-0}" = 1 ]; then
			rm -f "$DATA/kswapd.$i"
			truncate -s 256M "$DATA/kswapd.$i"
		else
			dd if=/dev/zero of="$DATA/kswapd.$i" bs=1M count=256 status=none
		fi || return 1
	done
	sync
	echo 3 > /proc/sys/vm/drop_caches
	pin=$(($(awk '/MemAvailable/ {print int($2 / 1024)}' /proc/meminfo) - 300))
	pinned=$SECONDS
	"$BIN/anonhold" "$pin" mlock &
	pinner=$!
	for i in $(seq 600); do
		[ "$(mlocked_mib)" -ge "$pin" ] && break
		kill -0 $pinner || { echo "stress: cannot mlock $pin MiB"; return 1; }
		sleep 0.5
	done
	[ "$(mlocked_mib)" -ge "$pin" ] || {
		echo "stress: $pin MiB not mlocked in 300 s: $(mlocked_mib) MiB"
		kill $pinner
		wait $pinner
		return 1
	}
	pinned=$((SECONDS - pinned))
	[ "$allowing" = default ] || echo "$allowing" > "$allow" || return 1
	SCANNED=$(vmstat_of pgscan_kswapd)
	HELPED=$(vmstat_of pgscan_kswapd_helper)
	direct=$(vmstat_of pgscan_direct)
	end=$((SECONDS + SECONDS_EACH))
	last=$((SECONDS + ${UNTIL_TIMES:-3} * SECONDS_EACH))
	while [ $SECONDS -lt $end ] || { [ -n "${UNTIL:-}" ] &&
		[ $SECONDS -lt $last ] && ! $UNTIL; }; do
		i=$((cycles % 3 + 1))
		[ -d "$PARENT/kswapd$i" ] && { kill_and_remove "$PARENT/kswapd$i" || rc=1; }
		mkdir "$PARENT/kswapd$i" || rc=1
		[ "$i" -eq 3 ] && { echo 128M > "$PARENT/kswapd$i/memory.max" || rc=1; }
		wmarks "$wm" > "$PARENT/kswapd$i/memory.reclaim_wmarks" || rc=1
		run_in "$PARENT/kswapd$i" sh -c 'while :; do
			[ "$2" = 1 ] ||
				dd if=/dev/zero of="$1" bs=1M count=256 conv=notrunc status=none
			dd if="$1" of=/dev/null bs=1M status=none
		done' sh "$DATA/kswapd.$i" "${READ_ONLY:-0}"
		echo $((cycles % 2 + 2)) > "$pool" || rc=1
		if [ "${READ_ONLY:-0}" = 1 ]; then
			[ -z "$lru_gen0" ] || echo y > "$lru_gen" || rc=1
		elif [ -n "$lru_gen0" ]; then
			case $((cycles % 4)) in
			0 | 1) echo y > "$lru_gen" || rc=1 ;;
			*) echo n > "$lru_gen" || rc=1 ;;
			esac
		fi
		sleep 1
		cycles=$((cycles + 1))
	done
	# Pressure that never woke kswapd: what the readers and kswapd were
	# waiting for.
	kswapd_scanned || show_waiters
	for i in 1 2 3; do
		[ -d "$PARENT/kswapd$i" ] && { kill_and_remove "$PARENT/kswapd$i" || rc=1; }
	done
	kill $pinner
	wait $pinner
	used=$(cat "$allow")
	echo "$allowed" > "$allow"
	echo "$bound" > "$pool"
	[ -z "$lru_gen0" ] || echo "$lru_gen0" > "$lru_gen" || rc=1
	rm -f "$DATA"/kswapd.*
	SCANNED=$(($(vmstat_of pgscan_kswapd) - SCANNED))
	HELPED=$(($(vmstat_of pgscan_kswapd_helper) - HELPED))
	lru_gen0=${lru_gen0:+ (MGLRU switched every 2)}
	[ "${READ_ONLY:-0}" = 1 ] && lru_gen0=" (reading only, MGLRU on)"
	echo "stress: $cycles reader restarts with \"$(wmarks "$wm")\", helpers allowed: $used$lru_gen0; kswapd scanned $SCANNED pages, its helpers $HELPED of them, direct reclaim $(($(vmstat_of pgscan_direct) - direct)); $pin MiB mlocked in ${pinned}s"
	return $rc
}

# The lruvec events of kswapd's helpers and the workers, and the ends of
# the passes kswapd shared with helpers, go to a trace instance of their
# own, on the global clock, read as they come (the run events stay in the
# main buffer, for settle()).  The harness turns these events on at boot
# too, so turning them on in the instance patches no kernel text.  The
# passes are kept in $PASSES for the kswapd-target phase.
LRUVECS=$TRACE/instances/lruvecs
LRUVEC_EVENTS="mm_vmscan_memcg_bgreclaim_lruvec_enter mm_vmscan_memcg_bgreclaim_lruvec_leave mm_vmscan_kswapd_helped_pass"
PASSES=/tmp/stress-passes
# The reader starts last: a failed start leaves no reader behind.
lruvec_trace_start() {
	local ev
	mkdir "$LRUVECS" && echo global > "$LRUVECS/trace_clock" || return 1
	for ev in $LRUVEC_EVENTS; do
		echo 1 > "$LRUVECS/events/vmscan/$ev/enable" ||
			{ rmdir "$LRUVECS"; return 1; }
	done
	cat "$LRUVECS/trace_pipe" > "$DATA/lruvecs.trace" &
	LRUVEC_READER=$!
}

# Stop tracing and say how many times a background reclaimer entered a
# lruvec, by helpers and by workers, how many times into one another was
# in, how many events were lost, how many entries were not as kswapd
# (helpers) or were (workers), and how many helpers entered the root
# cgroup's lruvec.  In timestamp order, and events of one instant in the
# order the trace gave them (a CPU's own events come in order, and a
# reclaimer can leave an empty lruvec within the microsecond it entered);
# two in a lruvec for no more than 100 us count as clock skew between
# CPUs, as in test_bgr_one_reclaimer.
lruvec_trace_stop() {
	local ev
	for ev in $LRUVEC_EVENTS; do
		echo 0 > "$LRUVECS/events/vmscan/$ev/enable"
	done
	sleep 1
	kill "$LRUVEC_READER"
	wait "$LRUVEC_READER" 2>/dev/null
	rmdir "$LRUVECS"
	sed -n 's/.*mm_vmscan_kswapd_helped_pass: //p' "$DATA/lruvecs.trace" > "$PASSES"
	awk '/LOST [0-9]+ EVENTS/ { lost += $(NF - 1) }
	/_lruvec_(enter|leave): / {
		for (i = 1; i <= NF; i++) {
			if ($i ~ /^[0-9]+\.[0-9]+:$/) ts = substr($i, 1, length($i) - 1)
			if ($i ~ /^(cgroup_id|nid|reclaimer|kswapd)=/) f[substr($i, 1, 3)] = $i
		}
		print ts, /_enter: / ? 1 : 0, f["cgr"] "," f["nid"], f["rec"], f["ksw"]
	}
	END { if (lost) print "lost", lost }' "$DATA/lruvecs.trace" |
		sort -s -k1,1n | awk '
	$1 == "lost" { lost = $2; next }
	$2 == 1 {
		entries++; helper = $4 == "reclaimer=0"; helpers += helper
		misnamed += helper != ($5 == "kswapd=1")
		root += helper && $3 ~ /^cgroup_id=1,/
		if (inside[$3]++ > 0 && !met[$3]) met[$3] = $1
	}
	$2 == 0 {
		if (inside[$3] > 0) inside[$3]--
		if (met[$3] && $1 - met[$3] > 0.0001) over++
		met[$3] = 0
	}
	END {
		print entries + 0, helpers + 0, entries - helpers, over + 0, lost + 0,
		      misnamed + 0, root + 0
	}'
	rm -f "$DATA/lruvecs.trace"
}

# Whether kswapd's helpers have scanned a page since node_pressure began.
helped() { [ "$(vmstat_of pgscan_kswapd_helper)" -ne "$HELPED" ]; }

# node_pressure's arguments, with the lruvec events traced: never two
# background reclaimers in a lruvec at once, every helper and no worker as
# kswapd, no helper in the root cgroup's lruvec.
traced_node_pressure() {
	local entries helpers workers over lost misnamed root
	rm -f "$PASSES"
	lruvec_trace_start || return 1
	node_pressure "$@" || { lruvec_trace_stop > /dev/null; return 1; }
	read -r entries helpers workers over lost misnamed root <<< "$(lruvec_trace_stop)"
	echo "stress: $entries entries into a lruvec, $helpers by helpers, $workers by workers; $over into one another was in; $lost events lost"
	echo "stress: $misnamed entries by a helper not as kswapd or by a worker as kswapd; $root by helpers into the root cgroup's lruvec"
	[ "$over" -eq 0 ] && [ "$lost" -eq 0 ] && [ "$misnamed" -eq 0 ] &&
		[ "$root" -eq 0 ]
}

# kswapd's helpers at work on cgroups that turned background reclaim on,
# as traced_node_pressure checks them.  Status 3 when the helpers never
# ran (nothing was tested).
kswapd_phase() {
	UNTIL=helped traced_node_pressure auto Y || return 1
	# Too short a phase on a slow kernel may not fill memory at all.
	[ "$SCANNED" -gt 0 ] ||
		{ echo "stress: kswapd never ran: no node pressure in $((3 * SECONDS_EACH))s"; return 3; }
	[ "$HELPED" -gt 0 ] || { echo "stress: kswapd's helpers never ran"; return 3; }
}

# The MGLRU passes among the mm_vmscan_kswapd_helped_pass fields on
# stdin, as "passes reached past most helped all": how many, how many
# reclaimed their target, how many reclaimed more LRU pages than the
# target and a batch (64 pages) per reclaimer (each also on stderr), the
# most LRU pages past a target, and the pages the helpers and the passes
# reclaimed.  Slab pages count towards the target, but one shrinker call
# is no batch, so they are left out of the bound.
judge_passes() {
	awk '{
		for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
		if (!f["lru_gen"]) next
		passes++
		lru = f["reclaimed"] - f["slab"]
		reached += f["reclaimed"] >= f["target"]
		excess = lru - f["target"]
		if (passes == 1 || excess > most) most = excess
		if (excess > 64 * (f["helpers"] + 1)) {
			past++
			print "stress: past the bound: " $0 > "/dev/stderr"
		}
		helped += f["by_helpers"]; all += f["reclaimed"]
	}
	END {
		print passes + 0, reached + 0, past + 0, most + 0, helped + 0, all + 0
	}'
}

# Whether $PASSES_REACHED MGLRU passes shared with helpers have reclaimed
# their target, in the trace so far.
PASSES_REACHED=10
reached_targets() {
	local passes reached rest
	read -r passes reached rest <<< "$(sed -n 's/.*mm_vmscan_kswapd_helped_pass: //p' \
		"$DATA/lruvecs.trace" | judge_passes 2> /dev/null)"
	[ "$reached" -ge "$PASSES_REACHED" ]
}

# MGLRU's passes that kswapd shared with helpers.  kswapd and its helpers
# share the pass's target, so the LRU pages a pass reclaimed exceed it by
# at most one batch (MIN_LRU_BATCH, 64 pages; ext4's page cache has no
# large folios here) per reclaimer, kswapd and each of the helpers it may
# run at once (judge_passes).  Only a pass that reaches its target can
# overshoot it, and few do: most end when the node is balanced or their
# walk is done.  So the tasks read holes (clean page cache, allocated as
# fast as it is read, reclaimed as fast as it is scanned), and
# min_free_kbytes is 4 MiB for the phase, which brings the target, the
# node's high watermarks, from about 8,300 pages to 1,500-3,700 (without
# it, 0 to 7 passes reached it in five 90 s runs; with it, 3 to 11 in
# four).  Goes on until $PASSES_REACHED passes reached their target, or
# six times SECONDS.  Status 3 when none did (nothing was tested).
kswapd_target_phase() {
	local passes reached past most helped all rc min_free
	[ -w /sys/kernel/mm/lru_gen/enabled ] ||
		{ echo "stress: no MGLRU in this kernel: nothing to judge"; return 3; }
	min_free=$(cat /proc/sys/vm/min_free_kbytes)
	echo 4096 > /proc/sys/vm/min_free_kbytes || return 1
	UNTIL=reached_targets UNTIL_TIMES=6 READ_ONLY=1 traced_node_pressure auto Y
	rc=$?
	echo "$min_free" > /proc/sys/vm/min_free_kbytes || rc=1
	[ -f "$PASSES" ] || return 1
	read -r passes reached past most helped all <<< "$(judge_passes < "$PASSES")"
	echo "stress: $passes MGLRU passes shared with helpers, $reached of them reached their target; helpers reclaimed $helped of their $all pages; LRU pages past a target: at most $most; $past passes past it by more than a batch per reclaimer"
	rm -f "$PASSES"
	[ "$rc" -eq 0 ] && [ "$past" -eq 0 ] || return 1
	[ "$reached" -gt 0 ] || { echo "stress: no pass shared with helpers reached its target: the bound was not tested"; return 3; }
}

# The same pressure where kswapd must reclaim alone, as without the
# series (the kswapd phase before it shows that helpers run otherwise):
# for cgroups that turned background reclaim on while the helpers are
# off, as they are by default, and for cgroups that never turned it on
# while the helpers are allowed.  Each goes on until kswapd has scanned,
# up to three times SECONDS: in one run of three here, 30 s of readers
# never woke kswapd (its status 3 failed CI's helpers pass).
helpers_off_phase() {
	local wm allowing
	for wm in "auto default" "off Y"; do
		read -r wm allowing <<< "$wm"
		UNTIL=kswapd_scanned node_pressure "$wm" "$allowing" || return 1
		[ "$SCANNED" -gt 0 ] ||
			{ echo "stress: kswapd never ran: no node pressure in $((3 * SECONDS_EACH))s"; return 3; }
		[ "$HELPED" -eq 0 ] || {
			echo "stress: helpers reclaimed with watermarks \"$wm\" and helpers allowed: $allowing"
			return 1
		}
	done
}

mkdir -p "$PARENT"
echo +memory > "$PARENT/cgroup.subtree_control"
trace_events 1
phase churn churn
phase rewrite rewrite
phase freeze freeze
phase swapoff swapoff_phase
phase oom oom
phase hotplug hotplug
phase kswapd kswapd_phase no-worker
phase kswapd-target kswapd_target_phase no-worker
phase helpers-off helpers_off_phase no-worker
trace_events 0
rmdir "$PARENT"
[ ! -d "$CHARGER" ] || rmdir "$CHARGER"
