# Entry points.  A new user needs two: `make demo` and `make check`.
# Both install what is missing first and are quick when all is present.

HARNESS := python3 -m harness
VARIANT ?= lean
# The kernel base, a section of base.conf (7.3, 6.12); empty: its default.
BASE ?=
ON_BASE = $(if $(BASE),--base $(BASE))
# The base whose series is the backport that `make check` tests too.
BACKPORT ?= 6.12

.PHONY: demo check unit setup refresh export checkpatch kernel selftests \
	baseline bisect bench selftests-debug selftests-numa selftests-helpers \
	selftests-kswapd-target selftests-backport stress mutants

demo:                  ## build the patched kernel, boot it, run the demo
	$(HARNESS) demo $(ON_BASE) --variant $(VARIANT)

check: unit checkpatch selftests selftests-numa selftests-helpers selftests-debug selftests-backport   ## everything CI runs

unit:                  ## harness unit tests (no kernel needed)
	$(HARNESS) unit

setup:                 ## install dependencies and create build/BASE/linux
	$(HARNESS) setup $(ON_BASE)

refresh:               ## reset build/BASE/linux to the base + its series
	$(HARNESS) setup $(ON_BASE) --refresh

export:                ## write build/BASE/linux base..HEAD into the base's series folder
	$(HARNESS) export $(ON_BASE)

checkpatch:            ## checkpatch.pl --strict on every patch of every base's series (or BASE's)
	$(HARNESS) checkpatch $(ON_BASE)

kernel:                ## build bzImage and the cgroup kselftests
	$(HARNESS) build $(ON_BASE) --variant $(VARIANT)

selftests:             ## cgroup kselftests in a VM, against the baseline
	$(HARNESS) selftests $(ON_BASE) --variant $(VARIANT)

selftests-debug:       ## the debug kernel (KASAN, lockdep...): series tests, memcg tests, fuzz, stress
	$(HARNESS) selftests $(ON_BASE) --variant debug --profile subset

selftests-numa:        ## the series' tests in a guest of two NUMA nodes (lean kernel)
	$(HARNESS) selftests $(ON_BASE) --variant lean --profile numa

selftests-helpers:     ## kswapd's helpers: stress phases in a guest of two nodes of two vCPUs, run by one host thread
	$(HARNESS) selftests $(ON_BASE) --variant lean --profile helpers

selftests-kswapd-target: ## MGLRU passes kswapd shares with its helpers (not in check: it mostly skips on a slow host)
	$(HARNESS) selftests $(ON_BASE) --variant lean --profile kswapd-target

selftests-backport:    ## the backport's lean kernel: series tests, test_memcontrol (and @auto), KUnit, fuzz
	$(HARNESS) selftests --base $(BACKPORT) --variant lean --profile backport

stress:                ## the long race/fuzz run on the debug kernel (more than an hour under TCG)
	$(HARNESS) selftests $(ON_BASE) --variant debug --profile stress

# Each variant's baseline records what `make check` runs on it.
BASELINE_PROFILE = $(if $(filter debug,$(VARIANT)),subset,full)
baseline:              ## rewrite baseline/BASE/ from a run on the unpatched base (VARIANT=debug: its own file)
	$(HARNESS) selftests $(ON_BASE) --variant $(VARIANT) --unpatched \
		--update-baseline --profile $(BASELINE_PROFILE)

bisect:                ## build and boot every patch of the series on its own
	$(HARNESS) bisect $(ON_BASE) --variant $(VARIANT)

mutants:               ## build and test each mutant of mutants/ (not in CI; hours)
	$(HARNESS) mutants $(ON_BASE)

SCENARIO ?= all
bench:                 ## benchmarks into results/ (SCENARIO=storm|stream|...)
	$(HARNESS) bench $(SCENARIO) $(ON_BASE) --variant $(VARIANT)
