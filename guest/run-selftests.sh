#!/bin/bash
# Run the kselftest cgroup suite inside the VM, then test_bgreclaim (when
# built) once more with MGLRU and zswap on, as a program of its own.
# usage: run-selftests.sh RESULTS_DIR KSELFTEST_DIR TIMEOUT_SECONDS
set -u
results=$1 kselftest=$2 timeout=$3
. "$(dirname "$0")/common.sh"

guest_setup || { guest_finish "$results" 1; exit 1; }
echo "guest: $(uname -r), $(nproc) CPUs, $(awk '/MemTotal/ {print $2 " kB"}' /proc/meminfo), swap $(awk 'NR > 1 {print $3 " kB"}' /proc/swaps)"

# The tests create files in their working directory (O_TMPFILE, page cache
# for the memcg tests): run them from the ext4 scratch disk, not 9p.
cp -a "$kselftest" "$SCRATCH/kselftest"
cd "$SCRATCH/kselftest" || exit 1
./run_kselftest.sh --override-timeout "$timeout" 2>&1 | tee "$results/tap.txt"
rc=${PIPESTATUS[0]}

# Results are judged from the TAP output; the exit code only tells the
# host that the script got to the end.

# One more result for test_bgreclaim with MGLRU and zswap on.
if [ -x cgroup/test_bgreclaim ]; then
	echo y > /sys/kernel/mm/lru_gen/enabled
	echo Y > /sys/module/zswap/parameters/enabled
	(cd cgroup && tap_program test_bgreclaim-mglru-zswap "$timeout" \
		./test_bgreclaim) | tee -a "$results/tap.txt"
fi
guest_finish "$results" "$rc"
