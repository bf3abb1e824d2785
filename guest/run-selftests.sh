#!/bin/bash
# Run the kselftest cgroup suite inside the VM (or only the named PROGRAMs),
# then, on a kernel with background reclaim: test_bgreclaim's reclaim tests
# once more with MGLRU and zswap on, the memory controller's tests once
# more with `auto` watermarks on every cgroup they create (as
# PROGRAM@auto), the memory.reclaim_wmarks fuzzer, with the whole suite
# only the live view tools/cgroup/memcg_bgreclaim_top.py and crun and runc
# setting watermarks through OCI bundles, and the race stress phases
# (unless STRESS_CYCLES is 0), each as results of their own in the same
# TAP file.
# usage: run-selftests.sh RESULTS_DIR KSELFTEST_DIR TIMEOUT_SECONDS BIN_DIR
#        KERNEL_TREE FUZZ_INPUTS STRESS_CYCLES STRESS_SECONDS STRESS_PHASES
#        BGRECLAIM_TESTS [PROGRAM...|none]
# STRESS_PHASES: stress.sh's phases, comma-separated, or "default" for
# its default ones.  BGRECLAIM_TESTS: which of test_bgreclaim's tests its
# plain pass runs, "all" or a set below (with test_bgreclaim named among
# the PROGRAMs).  "none" for the programs: no kselftest program, only the
# fuzzer and the stress phases.
set -u
results=$1 kselftest=$2 timeout=$3 bin=$4 tree=$5 fuzz_inputs=$6 cycles=$7
seconds=$8 phases=${9//,/ } bgreclaim_set=${10}
shift 10
[ "$phases" = default ] && phases=
programs_too=y
[ "$*" = none ] && programs_too=
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"

guest_setup || { guest_finish "$results" 1; exit 1; }
echo "guest: $(uname -r), $(nproc) CPUs, $(awk '/MemTotal/ {print $2 " kB"}' /proc/meminfo), swap $(awk 'NR > 1 {print $3 " kB"}' /proc/swaps)"

# The tests create files in their working directory (O_TMPFILE, page cache
# for the memcg tests): run them from the ext4 scratch disk, not 9p.
cp -a "$kselftest" "$SCRATCH/kselftest"
cd "$SCRATCH/kselftest" || exit 1
# The MGLRU+zswap pass repeats the tests whose outcome depends on how
# pages are reclaimed (which LRU, what swap-out costs) or on the lruvecs a
# run walks.  The others judge the interface, the CPU the cgroup pays, the
# pool and the queue, none of which the LRU changes, and they took 250 of
# that pass's 340 seconds on the debug kernel: they run in the plain
# pass only.
LRU_TESTS="test_bgr_pagecache test_bgr_anon_swap test_bgr_swap_high
	test_bgr_socket_pressure test_bgr_ancestor test_bgr_backoff
	test_bgr_backoff_recovery test_bgr_rmdir_running test_bgr_high_backstop
	test_bgr_relief test_bgr_one_reclaimer test_bgr_own_protection
	test_bgr_auto_gap test_bgr_cpuset_nodes"
mglru_tests=$LRU_TESTS

# The plain pass of test_bgreclaim: every test, or on a guest of two
# nodes the ones where the node layout matters (reclaim from per-node
# lruvecs, the pool spread over every node's CPUs), or on the debug
# kernel all but six that only measure: CPU shares, give-ups and
# latencies over fixed windows, which KASAN stretches to 19-46 s each
# (5-19 s on the lean kernel, which judges them) and whose code paths
# test_bgr_rmdir_pending (a worker paused by cpu.max),
# test_bgr_starved_tenant and test_bgr_backoff run.
case $bgreclaim_set in
all) bgreclaim_args=() ;;
# shellcheck disable=SC2206 # one word per test
numa) bgreclaim_args=($LRU_TESTS test_bgr_pool_bound) ;;
debug) bgreclaim_args=(-x test_bgr_backoff_narrow -x test_bgr_cpu_max
	-x test_bgr_cpu_max_ancestor -x test_bgr_cpu_weight
	-x test_bgr_worker_share -x test_bgr_lock_wait) ;;
# The 6.12 backport: all but a test whose bound was within 10% of what it
# measured (backports/6.12/README.md).
backport) bgreclaim_args=(-x test_bgr_gives_way)
	# 7.3's only: the backport reclaims every node alike.
	mglru_tests=${LRU_TESTS/test_bgr_cpuset_nodes/} ;;
*) echo "run-selftests.sh: no test set $bgreclaim_set"
	guest_finish "$results" 1; exit 1 ;;
esac
# A set applies where test_bgreclaim is named (not on the base, which
# lacks it), and test_bgreclaim then runs on its own, after the others.
[[ " $* " == *" test_bgreclaim "* ]] || bgreclaim_args=()
selection=()
for prog in "$@"; do
	[ ${#bgreclaim_args[@]} -gt 0 ] && [ "$prog" = test_bgreclaim ] &&
		continue
	selection+=(-t "cgroup:$prog")
done
rc=0
: > "$results/tap.txt"
# An empty selection would run the whole suite.
if [ -n "$programs_too" ] && { [ $# -eq 0 ] || [ ${#selection[@]} -gt 0 ]; }; then
	./run_kselftest.sh --override-timeout "$timeout" "${selection[@]}" \
		2>&1 | tee "$results/tap.txt"
	rc=${PIPESTATUS[0]}
fi
if [ ${#bgreclaim_args[@]} -gt 0 ]; then
	(cd cgroup && tap_program test_bgreclaim "$timeout" \
		./test_bgreclaim "${bgreclaim_args[@]}") |
		tee -a "$results/tap.txt"
fi
# Results are judged from the TAP output; the exit code only tells the
# host that the script got to the end.

# Run the memory controller's tests in a cgroup whose watermarks are
# `auto`: mounted as the hierarchy's root, it is where they create their
# cgroups, which inherit the setting.
with_auto_wmarks() {
	local opts
	opts=$(awk '$3 == "cgroup2" && $2 == "/sys/fs/cgroup" {print $4}' \
		/proc/mounts)
	mkdir /sys/fs/cgroup/auto &&
		echo auto > /sys/fs/cgroup/auto/memory.reclaim_wmarks &&
		cat /sys/fs/cgroup/cgroup.subtree_control |
		sed 's/\(\S*\)/+\1/g' > /sys/fs/cgroup/auto/cgroup.subtree_control &&
		mkdir -p /tmp/cgroup-auto &&
		mount --bind /sys/fs/cgroup/auto /tmp/cgroup-auto &&
		umount /sys/fs/cgroup &&
		mount --move /tmp/cgroup-auto /sys/fs/cgroup || return 1
	"$@"
	umount /sys/fs/cgroup
	mount -t cgroup2 -o "$opts" none /sys/fs/cgroup
	rmdir /sys/fs/cgroup/auto
}

# Not test_zswap: test_no_invasive_cgroup_shrink moves itself back into
# the hierarchy's root, which here is a cgroup with controllers enabled,
# so the no-internal-process rule refuses it and the test then kills
# itself while destroying the cgroup it could not leave.
auto_selection=()
for prog in test_memcontrol test_kmem; do
	if [ $# -eq 0 ] || [[ " $* " == *" $prog "* ]]; then
		auto_selection+=(-t "cgroup:$prog")
	fi
done

if [ -x cgroup/test_bgreclaim ]; then
	if [ -n "$programs_too" ]; then
		echo y > /sys/kernel/mm/lru_gen/enabled
		# shellcheck disable=SC2086 # one word per test
		(cd cgroup && tap_program test_bgreclaim-mglru-zswap \
			"$timeout" ./test_bgreclaim $mglru_tests) |
			tee -a "$results/tap.txt"
		echo n > /sys/kernel/mm/lru_gen/enabled
	fi

	if [ -n "$programs_too" ] && [ ${#auto_selection[@]} -gt 0 ]; then
		with_auto_wmarks ./run_kselftest.sh --override-timeout \
			"$timeout" "${auto_selection[@]}" 2>&1 |
			sed 's/^\(.*selftests: cgroup: [^ ]*\)/\1@auto/' |
			tee -a "$results/tap.txt"
	fi

	mkdir /sys/fs/cgroup/fuzz
	tap_program fuzz-wmarks "$timeout" python3 \
		"$here/fuzz_wmarks.py" /sys/fs/cgroup/fuzz "$fuzz_inputs" \
		"$(date +%s)" | tee -a "$results/tap.txt"
	rmdir /sys/fs/cgroup/fuzz

	# With the whole suite only: the live view and the runtimes exercise
	# no kernel path that the tests above do not, and a guest of two
	# nodes or the debug kernel tells nothing more of the tools.
	if [ $# -eq 0 ]; then
		tap_program memcg-bgreclaim-top "$timeout" "$here/check_top.sh" \
			"$tree/tools/cgroup/memcg_bgreclaim_top.py" \
			"$(dirname "$kselftest")" | tee -a "$results/tap.txt"
		timeout "$timeout" bash "$here/runtimes.sh" |
			tee -a "$results/tap.txt"
		status=${PIPESTATUS[0]}
		[ "$status" -eq 0 ] ||
			echo "not ok 1 selftests: cgroup: runtimes # exit=$status" |
			tee -a "$results/tap.txt"
	fi

	if [ "$cycles" -gt 0 ]; then
		# shellcheck disable=SC2086 # one word per phase
		bash "$here/stress.sh" "$bin" "$cycles" "$seconds" $phases |
			tee -a "$results/tap.txt"
		# A stress script that dies leaves its later phases unreported.
		status=${PIPESTATUS[0]}
		[ "$status" -eq 0 ] ||
			echo "not ok 1 selftests: cgroup: stress # exit=$status" |
			tee -a "$results/tap.txt"
	fi
fi
guest_finish "$results" "$rc"
