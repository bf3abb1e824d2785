#!/bin/bash
# Run cgroup kselftest programs again and again in one boot, to tell a
# flaky test from a regression: round N runs every PROGRAM in order and
# writes its TAP to RESULTS_DIR/round-N.tap.  PROGRAM:TEST,TEST runs only
# those tests of a program that takes test names (test_bgreclaim).
# usage: repeat.sh RESULTS_DIR KSELFTEST_DIR TIMEOUT_SECONDS ROUNDS PROGRAM...
set -u
results=$1 kselftest=$2 timeout=$3 rounds=$4
shift 4
. "$(dirname "$0")/common.sh"

guest_setup || { guest_finish "$results" 1; exit 1; }
cp -a "$kselftest" "$SCRATCH/kselftest"
cd "$SCRATCH/kselftest/cgroup" || exit 1
for round in $(seq 1 "$rounds"); do
	for spec in "$@"; do
		prog=${spec%%:*}
		tests=
		[ "$spec" = "$prog" ] || tests=${spec#*:}
		# shellcheck disable=SC2086 # one argument per test name
		tap_program "$prog" "$timeout" "./$prog" ${tests//,/ }
	done > "$results/round-$round.tap"
	echo "round $round: $(grep -c '^# ok' "$results/round-$round.tap") passed, $(grep -c '^# not ok' "$results/round-$round.tap") failed"
done
guest_finish "$results" 0
