#!/bin/bash
# Run one benchmark scenario in the VM: ROUNDS rounds, each running every
# VARIANT once in an order shuffled anew in every round, so that neither
# drift in the emulated machine nor what a trial leaves behind for the
# next favours a variant.  Each trial appends one JSON object to
# RESULTS_DIR/trials.jsonl.  SCRIPT.sh holds the scenario's trial();
# scenarios that differ only in their variants or the VM's clock share one.
# usage: run.sh RESULTS_DIR BIN_DIR SCENARIO SCRIPT ROUNDS KERNEL VARIANT...
set -u
RESULTS=$1 BIN=$2 scenario=$3 script=$4 rounds=$5 kernel=$6
shift 6
here=$(dirname "$0")
. "$here/../common.sh"
. "$here/lib.sh"
. "$here/$script.sh"

guest_setup || { guest_finish "$RESULTS" 1; exit 1; }
echo "bench: $scenario on $kernel ($(uname -r)), $(nproc) CPUs," \
	"$(awk '/MemTotal/ {print int($2 / 1024) " MiB"}' /proc/meminfo)," \
	"variants: $*"
for v in "$@"; do
	if [ "$v" != off ] && [ "$v" != userspace ] && [ "$v" != base ] &&
		! have_bgreclaim; then
		echo "bench: variant $v needs memory.reclaim_wmarks" >&2
		guest_finish "$RESULTS" 1
		exit 1
	fi
done
# A variant that needs the cpu controller (+cpumax, userspace's agent)
# leaves it enabled at the root: enabled before the first trial, so that
# every variant runs with it whatever the shuffled order.
case " $* " in
*+cpumax* | *" userspace "*)
	echo +cpu > /sys/fs/cgroup/cgroup.subtree_control ||
		{ guest_finish "$RESULTS" 1; exit 1; }
	echo "bench: cpu controller enabled at the root for every variant"
	;;
esac
scenario_setup || { guest_finish "$RESULTS" 1; exit 1; }
rc=0
for round in $(seq 1 "$rounds"); do
	slot=0
	for v in $(printf '%s\n' "$@" | shuf); do
		slot=$((slot + 1))
		echo "bench: round $round/$rounds, slot $slot: $v"
		TRIAL_ID=$kernel-$v-$round
		TRIAL_ID=${TRIAL_ID//[^A-Za-z0-9.-]/_}
		if ! out=$(trial "$v"); then
			echo "bench: trial $v failed: $out" >&2
			rc=1
			continue
		fi
		# shellcheck disable=SC2086
		json scenario "$scenario" kernel "$kernel" variant "$v" \
			round "$round" slot "$slot" $out >> "$RESULTS/trials.jsonl"
	done
done
guest_finish "$RESULTS" "$rc"
