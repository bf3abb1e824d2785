# Start-up storm: STARTUP_COUNT OCI containers (crun) started at once
# under one parent cgroup with memory.high; each reads its own image file
# (page cache charged to it), then marks itself ready, the readiness probe
# the host polls.  A container's time to ready runs from the moment all
# are started together to the moment its mark is seen.  Variant "floor"
# has no limit at all.

STARTUP_HIGH=$((192 << 20))
STARTUP_COUNT=8
STARTUP_IMAGE_MIB=32
STARTUP_TIMEOUT_S=300
STARTUP_STATE=/tmp/startup-crun
# auto+cpumax gives the parent one of the 2 vCPUs, as in service.
VARIANT_CPU_MAX="100000 100000"

bundle_of() { echo "$SCRATCH/startup/b$1"; }

# One bundle per container: busybox, its image file and a config whose
# cgroup is a child of $BENCH_CG.
scenario_setup() {
	local i b
	command -v crun > /dev/null ||
		{ echo "bench: startup needs crun" >&2; return 1; }
	for i in $(seq "$STARTUP_COUNT"); do
		b=$(bundle_of "$i")
		rm -rf "$b"
		mkdir -p "$b/rootfs/bin" "$b/rootfs/proc" "$b/rootfs/sys" \
			"$b/rootfs/dev" "$b/rootfs/data" || return 1
		cp /bin/busybox "$b/rootfs/bin/" || return 1
		ln -s busybox "$b/rootfs/bin/sh"
		ln -s busybox "$b/rootfs/bin/cat"
		ln -s busybox "$b/rootfs/bin/touch"
		ln -s busybox "$b/rootfs/bin/sleep"
		dd if=/dev/urandom of="$b/rootfs/data/image" bs=1M \
			count="$STARTUP_IMAGE_MIB" status=none || return 1
		(cd "$b" && crun spec) || return 1
		python3 - "$b/config.json" "${BENCH_CG#/sys/fs/cgroup}/c$i" <<'PY' || return 1
import json, sys
path, cgroup = sys.argv[1:]
with open(path) as f:
    spec = json.load(f)
spec["process"]["terminal"] = False
spec["process"]["args"] = ["sh", "-c",
    "cat /data/image > /dev/null && touch /data/ready && exec sleep 600"]
spec["root"] = {"path": "rootfs", "readonly": False}
spec["linux"]["cgroupsPath"] = cgroup
with open(path, "w") as f:
    json.dump(spec, f, indent=1)
PY
	done
	sync
}

remove_containers() {
	local i
	for i in $(seq "$STARTUP_COUNT"); do
		crun --root "$STARTUP_STATE" delete -f "startup-$i" 2> /dev/null
	done
}

trial() {
	local variant=$1 setting=$1 lat=$SCRATCH/startup.lat i b start
	local cpu0 high0 ready=0 seen=() pids=()
	remove_containers
	fresh_cgroup || return 1
	echo 3 > /proc/sys/vm/drop_caches
	rm -f "$lat"
	if [ "$variant" = floor ]; then
		setting=off
	else
		echo "$STARTUP_HIGH" > "$BENCH_CG/memory.high"
	fi
	set_variant "$BENCH_CG" "$setting" "$STARTUP_HIGH" || return 1
	echo +memory > "$BENCH_CG/cgroup.subtree_control"
	for i in $(seq "$STARTUP_COUNT"); do
		rm -f "$(bundle_of "$i")/rootfs/data/ready"
	done
	high0=$(event_of "$BENCH_CG" high)
	cpu0=$(cpu_ticks)
	start=$(date +%s%N)
	for i in $(seq "$STARTUP_COUNT"); do
		crun --root "$STARTUP_STATE" run -d --bundle "$(bundle_of "$i")" \
			"startup-$i" > /dev/null &
		pids+=($!)
	done
	while [ "$ready" -lt "$STARTUP_COUNT" ]; do
		for i in $(seq "$STARTUP_COUNT"); do
			[ -n "${seen[$i]:-}" ] && continue
			b=$(bundle_of "$i")
			[ -e "$b/rootfs/data/ready" ] || continue
			seen[$i]=$((($(date +%s%N) - start) / 1000000))
			echo "${seen[$i]}" >> "$lat"
			ready=$((ready + 1))
		done
		if [ $((($(date +%s%N) - start) / 1000000000)) -ge \
			"$STARTUP_TIMEOUT_S" ]; then
			echo "bench: $ready of $STARTUP_COUNT containers ready" \
				"after ${STARTUP_TIMEOUT_S}s" >&2
			remove_containers
			return 1
		fi
		sleep 0.02
	done
	wait "${pids[@]}" || { remove_containers; return 1; }
	echo "cpu_s $(echo "($(cpu_ticks) - $cpu0) / $(getconf CLK_TCK)" | bc -l)"
	echo "high_events $(($(event_of "$BENCH_CG" high) - high0))"
	echo "worker_cpu_s $(echo "$(stat_of "$BENCH_CG" bgreclaim_cpu_usec) / 1000000" | bc -l)"
	stop_reclaimer
	echo "latency_ms_file $(latency_file "$lat")"
	reclaim_counters "$BENCH_CG"
	remove_containers
}
