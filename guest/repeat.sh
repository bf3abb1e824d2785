#!/bin/bash
# Run cgroup kselftest programs again and again in one boot, to tell a
# flaky test from a regression: round N runs every PROGRAM in order and
# writes its TAP to RESULTS_DIR/round-N.tap.
# usage: repeat.sh RESULTS_DIR KSELFTEST_DIR TIMEOUT_SECONDS ROUNDS PROGRAM...
set -u
results=$1 kselftest=$2 timeout=$3 rounds=$4
shift 4
. "$(dirname "$0")/common.sh"

guest_setup || { guest_finish "$results" 1; exit 1; }
cp -a "$kselftest" "$SCRATCH/kselftest"
cd "$SCRATCH/kselftest/cgroup" || exit 1
for round in $(seq 1 "$rounds"); do
	for prog in "$@"; do
		tap_program "$prog" "$timeout" "./$prog"
	done > "$results/round-$round.tap"
	echo "round $round: $(grep -c '^# ok' "$results/round-$round.tap") passed, $(grep -c '^# not ok' "$results/round-$round.tap") failed"
done
guest_finish "$results" 0
