# A real service under memory.high: memcached holds about 64 MiB of hot
# items in a cgroup whose memory.high is 96 MiB, beside the cold data that
# fills the rest (a log writer appending at a fixed rate, a reader
# streaming a large file at a fixed rate); an open-loop client outside the
# cgroup sends gets at a fixed rate over loopback and times each request
# from when it was due.  Variant "floor" has no limit at all.

SERVICE_HIGH=$((96 << 20))
SERVICE_MAX=$((128 << 20))
SERVICE_CACHE_MIB=80
SERVICE_ITEMS=14000
SERVICE_VALUE_BYTES=4096
SERVICE_RATE=500
SERVICE_SECONDS=30
SERVICE_WARMUP_S=5
SERVICE_LOG_KIB=256
SERVICE_LOG_PERIOD_S=0.0625
SERVICE_READ_MIB_S=8
SERVICE_FILE_MIB=512
SERVICE_PORT=11311
# The tenant under cpu.max (auto+cpumax) gets one of the 2 vCPUs: at a
# quarter of one, memcached itself could not keep up (p50 1.5 s).
VARIANT_CPU_MAX="100000 100000"

# The scratch disk's queue: its readahead sets how much of the streaming
# reader's file is in flight, unread, above memcached's items.  The VM's
# disk reads ahead 8 MiB; 128 KiB is what a non-rotational disk that
# reports no optimal I/O size gets.  service-ra128 sets it for every
# trial, a variant named VARIANT+ra128 for its own trials.
scratch_queue() {
	echo "/sys/block/$(basename "$(findmnt -no SOURCE "$SCRATCH")")/queue"
}

scenario_setup() {
	command -v memcached > /dev/null ||
		{ echo "bench: service needs memcached" >&2; return 1; }
	SERVICE_DISK_RA_KB=$(cat "$(scratch_queue)/read_ahead_kb") || return 1
	if [ "$scenario" = service-ra128 ]; then
		SERVICE_DISK_RA_KB=128
	fi
	dd if=/dev/zero of="$SCRATCH/service.dat" bs=1M \
		count="$SERVICE_FILE_MIB" status=none && sync
}

# Append SERVICE_LOG_KIB every SERVICE_LOG_PERIOD_S until killed.
log_writer() {
	while :; do
		head -c "${SERVICE_LOG_KIB}K" /dev/zero
		sleep "$SERVICE_LOG_PERIOD_S"
	done >> "$SCRATCH/service.log"
}

psi_full_us() { sed -n 's/^full .*total=\([0-9]*\).*/\1/p' "$1/memory.pressure"; }

# Scenario service-trace traces what memcached's threads and the CPUs did
# while the client ran, for `python3 -m harness stalls` to attribute the
# slow requests: the trace on the monotonic clock, which mcload's
# start_us shares, and memcached's thread IDs beside it.  The events are
# on from boot (trace_events in service.toml): here the ring buffer is
# only cleared, started and stopped, which patches no kernel text.
TRACE=/sys/kernel/tracing

trace_on() {
	mountpoint -q "$TRACE" || mount -t tracefs none "$TRACE" || return 1
	echo 0 > "$TRACE/tracing_on" && echo 32768 > "$TRACE/buffer_size_kb" &&
		echo mono > "$TRACE/trace_clock" && echo > "$TRACE/trace" ||
		return 1
	grep -q sched_switch "$TRACE/set_event" ||
		{ echo "bench: the trace events are not on" >&2; return 1; }
	echo 1 > "$TRACE/tracing_on"
}

# The files whose page cache the trial churns, as "MAJOR:MINOR INODE
# NAME" lines: the page-cache events name a file by device and inode.
trial_files() {
	local f
	for f in "$SCRATCH/service.dat" "$SCRATCH/service.log" \
		$(command -v memcached bash head sleep) \
		$(ldd "$(command -v memcached)" | awk '$3 ~ /^\// {print $3}'); do
		stat -L -c '%Hd:%Ld %i %n' "$f"
	done
}

# trace_off MEMCACHED_PID: keep the trace, the thread IDs and the files'
# inodes in $RESULTS/trace/, and name the trace as the trial's metric.
trace_off() {
	echo 0 > "$TRACE/tracing_on"
	mkdir -p "$RESULTS/trace" &&
		cp "$TRACE/trace" "$RESULTS/trace/$TRIAL_ID.trace" &&
		ls "/proc/$1/task" > "$RESULTS/trace/$TRIAL_ID.tids" &&
		trial_files > "$RESULTS/trace/$TRIAL_ID.files" || return 1
	echo "sched_trace_file trace/$TRIAL_ID.trace"
	echo "trace_overrun $(awk '$1 == "overrun:" {s += $2} END {print s + 0}' \
		"$TRACE"/per_cpu/cpu*/stats)"
}

trial() {
	local variant=$1 setting=${1%+ra128} lat=$SCRATCH/service.lat out cpu0 i
	local high0 full0 bg0 readahead_kb=$SERVICE_DISK_RA_KB
	[ "$setting" = "$variant" ] || readahead_kb=128
	fresh_cgroup || return 1
	rm -f "$SCRATCH/service.log"
	echo 3 > /proc/sys/vm/drop_caches
	echo "$readahead_kb" > "$(scratch_queue)/read_ahead_kb" || return 1
	if [ "$setting" = floor ]; then
		setting=off
	else
		echo "$SERVICE_MAX" > "$BENCH_CG/memory.max"
		echo "$SERVICE_HIGH" > "$BENCH_CG/memory.high"
	fi
	set_variant "$BENCH_CG" "$setting" "$SERVICE_HIGH" || return 1
	run_in "$BENCH_CG" memcached -u nobody -l 127.0.0.1 -p "$SERVICE_PORT" \
		-U 0 -t 2 -m "$SERVICE_CACHE_MIB"
	for i in $(seq 50); do
		out=$("$BIN/mcload" "$SERVICE_PORT" fill "$SERVICE_ITEMS" \
			"$SERVICE_VALUE_BYTES" 2> /dev/null) && break
		sleep 0.1
	done
	[ -n "$out" ] || { echo "bench: memcached did not start" >&2; return 1; }
	in-cgroup "$BENCH_CG" bash -c "$(declare -f log_writer); $(declare -p \
		SCRATCH SERVICE_LOG_KIB SERVICE_LOG_PERIOD_S); log_writer" &
	WORKLOAD_PIDS+=($!)
	run_in "$BENCH_CG" "$BIN/pacedread" "$SCRATCH/service.dat" \
		"$SERVICE_READ_MIB_S" /dev/null
	sleep "$SERVICE_WARMUP_S"
	high0=$(event_of "$BENCH_CG" high)
	full0=$(psi_full_us "$BENCH_CG")
	bg0=$(stat_of "$BENCH_CG" bgreclaim_cpu_usec)
	cpu0=$(cpu_ticks)
	if [ "$scenario" = service-trace ]; then
		trace_on || return 1
	fi
	lock_stats_start || return 1
	out=$("$BIN/mcload" "$SERVICE_PORT" get "$SERVICE_ITEMS" "$SERVICE_RATE" \
		"$SERVICE_SECONDS" "$lat") || return 1
	lock_stats_stop || return 1
	if [ "$scenario" = service-trace ]; then
		trace_off "$(pgrep -x memcached)" || return 1
	fi
	echo "cpu_s $(echo "($(cpu_ticks) - $cpu0) / $(getconf CLK_TCK)" | bc -l)"
	echo "high_events $(($(event_of "$BENCH_CG" high) - high0))"
	echo "psi_full_us $(($(psi_full_us "$BENCH_CG") - full0))"
	echo "worker_cpu_s $(echo "($(stat_of "$BENCH_CG" bgreclaim_cpu_usec) - $bg0) / 1000000" | bc -l)"
	echo "usage_mib $(($(cat "$BENCH_CG/memory.current") >> 20))"
	echo "readahead_kb $(cat "$(scratch_queue)/read_ahead_kb")"
	# Where auto's gap has taken the low watermark by the end.
	awk '$1 == "low" && $2 != "max" {print "low_wmark_mib", int($2 / 1048576)}' \
		"$BENCH_CG/memory.reclaim_wmarks.effective" 2> /dev/null
	echo 1 > "$BENCH_CG/cgroup.kill"
	wait "${WORKLOAD_PIDS[@]}" 2> /dev/null
	WORKLOAD_PIDS=()
	stop_reclaimer
	echo "$out"
	echo "latency_us_file $(latency_file "$lat")"
	reclaim_counters "$BENCH_CG"
}
