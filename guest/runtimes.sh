#!/bin/bash
# Container runtimes set memory.reclaim_wmarks through the OCI bundle's
# linux.resources.unified map: for crun and runc, as TAP results, check
# that the container's cgroup gets the configuration ("auto" and explicit
# percentages), that a page cache workload in it is reclaimed in the
# background without direct reclaim, and that an invalid value makes
# container creation fail with no container, process or configuration
# left behind.
# usage: runtimes.sh
set -u
BUNDLE=$SCRATCH/bundle
n=0

make_rootfs() {
	local cmd
	rm -rf "$BUNDLE"
	mkdir -p "$BUNDLE/rootfs/bin" "$BUNDLE/rootfs/proc" \
		"$BUNDLE/rootfs/sys" "$BUNDLE/rootfs/dev" "$BUNDLE/rootfs/data"
	cp /bin/busybox "$BUNDLE/rootfs/bin/" || return 1
	for cmd in sh dd sleep cat; do
		ln -s busybox "$BUNDLE/rootfs/bin/$cmd"
	done
}

# config RUNTIME NAME WMARKS HIGH: write config.json for a container that
# fills 96 MiB of page cache and then sleeps, with memory.high = HIGH.
config() {
	local rt=$1 name=$2 wmarks=$3 high=$4
	(cd "$BUNDLE" && rm -f config.json && "$rt" spec) || return 1
	python3 - "$BUNDLE/config.json" "$name" "$wmarks" "$high" <<'PY'
import json, sys
path, name, wmarks, high = sys.argv[1:]
with open(path) as f:
    spec = json.load(f)
spec["process"]["terminal"] = False
spec["process"]["args"] = ["sh", "-c",
    "dd if=/dev/zero of=/data/fill bs=1M count=96 && exec sleep 600"]
spec["root"] = {"path": "rootfs", "readonly": False}
linux = spec["linux"]
linux["cgroupsPath"] = "/" + name
linux["resources"] = {"unified": {"memory.high": high,
                                  "memory.reclaim_wmarks": wmarks}}
with open(path, "w") as f:
    json.dump(spec, f, indent=1)
PY
}

stat_of() { awk -v k="$2" '$1 == k {print $2}' "$1/memory.stat"; }

# check_container RUNTIME WMARKS EXPECTED_READBACK HIGH NO_DIRECT: the
# configuration arrives and the worker reclaims; with NO_DIRECT=1 the
# tasks must not have reclaimed at all (the watermarks leave them room).
check_container() {
	local rt=$1 wmarks=$2 want=$3 high=$4 no_direct=$5 name=bgr-$1-$RANDOM
	local cg state=/tmp/$1-state
	config "$rt" "$name" "$wmarks" "$high" || return 1
	"$rt" --root "$state" run -d --bundle "$BUNDLE" "$name" > /dev/null ||
		{ echo "$rt run failed"; return 1; }
	cg=/sys/fs/cgroup/$name
	local got
	got=$(cat "$cg/memory.reclaim_wmarks")
	echo "$rt: $cg: memory.reclaim_wmarks=$got, memory.high=$(cat "$cg/memory.high")"
	echo "$rt: effective: $(tr '\n' ' ' < "$cg/memory.reclaim_wmarks.effective")"
	[ "$got" = "$want" ] || { echo "$rt: read back '$got', want '$want'"; return 1; }
	[ "$(cat "$cg/memory.high")" = $((${high%M} << 20)) ] ||
		{ echo "$rt: memory.high is not $high"; return 1; }
	# Until the fill is done and the worker has brought usage below the
	# high watermark: 96 MiB of page cache stays resident without it.
	# (Low is the worker's target, not a promise: dirty pages it skips
	# can leave usage a little above low until writeback cleans them.)
	local high_wm low_wm
	high_wm=$(awk '$1 == "high" {print $2}' "$cg/memory.reclaim_wmarks.effective")
	low_wm=$(awk '$1 == "low" {print $2}' "$cg/memory.reclaim_wmarks.effective")
	for _ in $(seq 300); do
		[ -e "$BUNDLE/rootfs/data/fill" ] &&
			[ "$(stat -c %s "$BUNDLE/rootfs/data/fill")" -eq $((96 << 20)) ] &&
			[ "$(cat "$cg/memory.current")" -le "$high_wm" ] && break
		sleep 0.2
	done
	echo "$rt: usage $(($(cat "$cg/memory.current") >> 20)) MiB," \
		"watermarks high $((high_wm >> 20)) MiB low $((low_wm >> 20)) MiB," \
		"pgsteal_bgreclaim $(stat_of "$cg" pgsteal_bgreclaim)," \
		"pgscan_direct $(stat_of "$cg" pgscan_direct)," \
		"bgreclaim_runs $(stat_of "$cg" bgreclaim_runs)"
	local ok=0
	[ "$(cat "$cg/memory.current")" -le "$high_wm" ] ||
		{ echo "$rt: usage above the high watermark"; ok=1; }
	[ "$(stat_of "$cg" pgsteal_bgreclaim)" -gt 0 ] || { echo "$rt: no background reclaim"; ok=1; }
	if [ "$no_direct" = 1 ] && [ "$(stat_of "$cg" pgscan_direct)" -ne 0 ]; then
		echo "$rt: direct reclaim happened"
		ok=1
	fi
	"$rt" --root "$state" kill "$name" KILL
	for _ in $(seq 50); do
		"$rt" --root "$state" delete "$name" 2>/dev/null && break
		sleep 0.1
	done
	[ ! -d "$cg" ] || { echo "$rt: cgroup left behind after delete"; ok=1; }
	rm -f "$BUNDLE/rootfs/data/fill"
	return $ok
}

# check_invalid RUNTIME WMARKS: creation fails, nothing is left.
check_invalid() {
	local rt=$1 wmarks=$2 name=bgr-bad-$1-$RANDOM out state=/tmp/$1-state
	config "$rt" "$name" "$wmarks" 64M || return 1
	if out=$("$rt" --root "$state" run -d --bundle "$BUNDLE" "$name" 2>&1); then
		echo "$rt: created a container with memory.reclaim_wmarks='$wmarks'"
		"$rt" --root "$state" delete -f "$name"
		return 1
	fi
	echo "$rt: refused '$wmarks': $(echo "$out" | tail -n 1)"
	if ! echo "$out" | grep -q reclaim_wmarks; then
		echo "$rt: the error is not about memory.reclaim_wmarks"
		return 1
	fi
	if "$rt" --root "$state" state "$name" > /dev/null 2>&1; then
		echo "$rt: the failed container still exists"
		return 1
	fi
	# crun 1.8 leaves the empty cgroup it created behind whenever it
	# refuses a unified value (memory.max=garbage too); runc removes it.
	# What matters is that nothing runs there and nothing was applied.
	local cg=/sys/fs/cgroup/$name
	if [ -d "$cg" ]; then
		echo "$rt: left its empty cgroup $cg behind: procs '$(cat "$cg/cgroup.procs")'," \
			"memory.reclaim_wmarks '$(cat "$cg/memory.reclaim_wmarks")'," \
			"memory.high '$(cat "$cg/memory.high")'"
		[ -z "$(cat "$cg/cgroup.procs")" ] &&
			[ "$(cat "$cg/memory.reclaim_wmarks")" = off ] ||
			{ echo "$rt: the failed container is half-configured"; return 1; }
		rmdir "$cg"
	fi
}

result() {
	local name=$1 rc
	shift
	n=$((n + 1))
	echo "# selftests: cgroup: $name"
	out=$("$@" 2>&1)
	rc=$?
	echo "$out" | sed 's/^/# /'
	if [ $rc -eq 0 ]; then
		echo "ok $n selftests: cgroup: $name"
	else
		echo "not ok $n selftests: cgroup: $name # exit=$rc"
	fi
}

make_rootfs || exit 1
for rt in crun runc; do
	if ! command -v "$rt" > /dev/null; then
		echo "not ok $((n += 1)) selftests: cgroup: runtime-$rt # $rt is not installed"
		continue
	fi
	# auto on memory.high=64M: high 62M, low 60M, a tight 2M of room.
	result "runtime-$rt-auto" check_container "$rt" auto auto 64M 0
	result "runtime-$rt-explicit" check_container "$rt" \
		"high=50% low=40%" "high=50% low=40%" 128M 1
	result "runtime-$rt-invalid" check_invalid "$rt" "high=50% low=60%"
done
