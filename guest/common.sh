# Shared setup for scripts that run inside the test VM (sourced).
# The host's root file system is visible read-only; the scratch disk
# (/dev/vda, ext4) and the swap disk (/dev/vdb) come from the harness.

guest_setup() {
	export SCRATCH=/tmp/scratch
	mkdir -p "$SCRATCH"
	mountpoint -q "$SCRATCH" || mount -t ext4 /dev/vda "$SCRATCH" ||
		{ echo "guest: cannot mount the scratch disk /dev/vda" >&2; return 1; }
	if ! grep -q '^/dev/vdb ' /proc/swaps; then
		swapon /dev/vdb ||
			{ echo "guest: cannot enable swap on /dev/vdb" >&2; return 1; }
	fi
	mountpoint -q /sys/fs/cgroup || mount -t cgroup2 none /sys/fs/cgroup
	# As systemd mounts it: nsdelegate (test_core's namespace tests) and
	# hugetlb accounting in memory.current (test_hugetlb_memcg).
	mount -o remount,nsdelegate,memory_hugetlb_accounting /sys/fs/cgroup ||
		{ echo "guest: cannot remount cgroup2" >&2; return 1; }
	# zswap is off at boot in this config; the zswap tests need it on.
	echo Y > /sys/module/zswap/parameters/enabled
	mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
	echo "+memory +cpu +cpuset +pids" > /sys/fs/cgroup/cgroup.subtree_control
}

# guest/in-cgroup starts a command in a cgroup; scripts call it by name.
PATH=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd):$PATH

# Save the kernel log next to the results, then tell the host we got here.
guest_finish() {
	local results=$1 rc=$2
	dmesg > "$results/dmesg.txt"
	echo "$rc" > "$results/exit-code"
}

# tap_program NAME TIMEOUT CMD...: run CMD in the current directory and
# print its output as one kselftest program result named NAME, the way
# run_kselftest.sh would (the program's own TAP nested behind "# ").
tap_program() {
	local name=$1 limit=$2 out status
	shift 2
	echo "# selftests: cgroup: $name"
	out=$(timeout "$limit" "$@" 2>&1)
	status=$?
	echo "$out" | sed 's/^/# /'
	if [ $status -eq 0 ]; then
		echo "ok 1 selftests: cgroup: $name"
	else
		echo "not ok 1 selftests: cgroup: $name # exit=$status"
	fi
}
