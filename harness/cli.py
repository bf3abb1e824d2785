"""Command line of the harness: python3 -m harness COMMAND."""

import argparse
import json
import os
import sys
import time
import unittest

from . import (baseline, bases, bench, bisect, build, deps, guest_run,
               kconfig, lockstat, mutants, stalls, tree)
from .common import REPO, HarnessError, log


def _setup(base, refresh=False):
    """The dependencies, the base's verified source and its kernel tree."""
    deps.ensure_all(base)
    tree.ensure_tree(base, refresh)


def _prepare(base, variant, unpatched=False):
    _setup(base)
    return build.build(base, variant, unpatched)


def cmd_setup(args):
    _setup(bases.get(args.base), refresh=args.refresh)
    return 0


def cmd_export(args):
    tree.export(bases.get(args.base))
    return 0


def cmd_checkpatch(args):
    """Every base's series (or --base's), each with its own tree's
    checkpatch.pl; then whether the mutants still apply to the default
    base's series."""
    checked = ([bases.get(args.base)] if args.base
               else list(bases.load().values()))
    failed = []
    for base in checked:
        _setup(base)
        failed += tree.checkpatch(base)
    default = bases.get()
    # While the default base's series is empty (being ported), the
    # mutants have no code of it to break.
    if default in checked and tree.series(default):
        stale = mutants.stale(default.tree)
        log(f"mutants that no longer apply: {', '.join(stale) or 'none'}")
        failed += [f"mutants/{name}.patch" for name in stale]
    if failed:
        log(f"checkpatch failed: {', '.join(failed)}")
        return 1
    return 0


def cmd_build(args):
    _prepare(bases.get(args.base), args.variant, args.unpatched)
    return 0


def cmd_unit(_args):
    suite = unittest.defaultTestLoader.discover(
        os.path.join(REPO, "tests"), top_level_dir=REPO)
    res = unittest.TextTestRunner(verbosity=1).run(suite)
    return 0 if res.wasSuccessful() else 1


def cmd_demo(args):
    base = bases.get(args.base)
    _prepare(base, args.variant)
    problems = guest_run.run_demo(base, args.variant)
    for p in problems:
        print(p)
    return 1 if problems else 0


def cmd_selftests(args):
    """Run the suite and compare with the baseline (or rewrite it)."""
    base = bases.get(args.base)
    want = guest_run.BASELINE_PROFILE.get(args.variant)
    if args.update_baseline and (not args.unpatched or args.profile != want):
        raise HarnessError("a baseline records the unpatched base: use "
                           "--unpatched with --update-baseline, and the "
                           f"profile make check runs on {args.variant} "
                           f"(--profile {want})")
    # Read before the long run, so that a broken manifest stops it.
    manifest = guest_run.load_manifest(args.profile, args.unpatched)
    if not args.no_build:
        _prepare(base, args.variant, args.unpatched)
    profile = guest_run.PROFILES[args.profile]
    start = time.monotonic()
    suite = guest_run.run_selftests(base, args.variant, args.unpatched,
                                    profile)
    log(f"suite ran in {time.monotonic() - start:.0f}s")
    if args.update_baseline:
        return _write_baseline(base, suite, args.variant)
    expected = guest_run.load_baseline(base, args.variant, profile.programs)
    cmp = baseline.compare(expected, suite.results, manifest, suite.plans)
    text = baseline.report(cmp, suite.notes)
    if text:
        print(text)
    for p in suite.problems:
        print(p)
    ok = cmp.ok and not suite.problems
    # The release the guest reported, not the one meant to boot: a stale
    # or mistaken image shows here.
    print(f"cgroup selftests "
          f"({build.kernel_name(base, args.variant, args.unpatched)}, "
          f"{args.profile}, guest kernel "
          f"{suite.guest_kernel or 'unknown'}): "
          f"{'OK' if ok else 'FAILED'}", flush=True)
    print(guest_run.summary_line(suite.results, cmp), flush=True)
    return 0 if ok else 1


def cmd_stalls(args):
    """What the slow requests of a traced service run waited for."""
    if not os.path.isfile(os.path.join(args.rundir, "trials.jsonl")):
        raise HarnessError(f"{args.rundir}: no trials.jsonl; give the run "
                           "directory of `bench service-trace` "
                           "(build/runs/bench-BASE-service-trace-N)")
    reports = stalls.report(args.rundir, args.rate, args.threshold_ms)
    if not reports:
        raise HarnessError(f"{args.rundir}: no traced trial")
    print(json.dumps(reports, indent=1) if args.json
          else stalls.render(reports))
    return 0


def cmd_locks(args):
    """Which locks tasks waited for longest in a lockstat run, by variant,
    summed over its trials."""
    if not os.path.isfile(os.path.join(args.rundir, "trials.jsonl")):
        raise HarnessError(f"{args.rundir}: no trials.jsonl; give the run "
                           "directory of a lockstat scenario "
                           "(build/runs/bench-BASE-service-locks-N)")
    totals = lockstat.by_variant(args.rundir)
    if not totals:
        raise HarnessError(f"{args.rundir}: no trial kept a lock_stat table")
    print(lockstat.render(totals, args.top))
    return 0


def cmd_repeat(args):
    """Run some test programs many times in one boot; tally the results."""
    if args.rounds < 1:
        raise HarnessError("--rounds must be at least 1")
    base = bases.get(args.base)
    if not args.no_build:
        _prepare(base, args.variant, args.unpatched)
    tally, problems = guest_run.run_repeat(base, args.variant,
                                           args.unpatched, args.programs,
                                           args.rounds)
    name = build.kernel_name(base, args.variant, args.unpatched)
    print(f"{args.rounds} rounds of {' '.join(args.programs)} on {name}:")
    for test, counts in tally.items():
        text = ", ".join(f"{counts[r]} {r}" for r in ("pass", "fail", "skip")
                         if r in counts)
        print(f"  {test:<60} {text}")
    for p in problems:
        print(p)
    return 1 if problems else 0


def cmd_bisect(args):
    """Build and boot every commit of the series on its own."""
    base = bases.get(args.base)
    _setup(base)
    problems = bisect.check(base, args.variant)
    for p in problems:
        print(p)
    print(f"bisectability ({base.name}, {args.variant}): "
          f"{'FAILED' if problems else 'OK'}", flush=True)
    return 1 if problems else 0


def cmd_mutants(args):
    """Build and test each mutant of mutants/; fail if one is not caught."""
    base = bases.get(args.base)
    _setup(base)
    missed = mutants.check(base, args.names)
    print(f"mutants: {'none' if not missed else ', '.join(missed)} "
          "not caught", flush=True)
    return 1 if missed else 0


def cmd_bench(args):
    """Run benchmark scenarios and write their reports into results/."""
    names = list(bench.SCENARIOS) if args.scenarios == ["all"] \
        else args.scenarios
    unknown = [n for n in names if n not in bench.SCENARIOS]
    if unknown:
        raise HarnessError(f"unknown scenario(s) {', '.join(unknown)}; "
                           f"choose from all, {', '.join(bench.SCENARIOS)}")
    if args.rounds is not None and args.rounds < 1:
        raise HarnessError("--rounds must be at least 1")
    base = bases.get(args.base)
    if args.report_only:
        deps.ensure_venv()    # the plots need matplotlib
    prepared = set()
    failed = False
    for name in names:
        scenario = bench.SCENARIOS[name]
        # A scenario that needs a kernel of its own (lock statistics)
        # names its config; the others run on --variant's.
        config = scenario.config or args.variant
        if args.report_only:
            trials, env, problems = bench.load_run(scenario)
        else:
            if config not in prepared:
                _prepare(base, config)
                prepared.add(config)
            started = time.monotonic()
            trials, problems = bench.run_scenario(base, scenario, config,
                                                  args.rounds)
            env = bench.environment(base, scenario, config,
                                    time.monotonic() - started)
        if not trials:
            problems.append("no trial produced results")
        else:
            bench.report(scenario, trials, env, problems)
        for p in problems:
            print(p)
        # Rewriting a report does not make its run's problems new.
        failed |= bool(problems) and not args.report_only
    bench.write_index()
    return 1 if failed else 0


def _write_baseline(base, suite, variant):
    if suite.problems:
        for p in suite.problems:
            print(p)
        log("not writing a baseline from a run with problems")
        return 1
    try:
        old = guest_run.load_baseline(base, variant)
    except HarnessError:
        old = {}
    reasons = {n: r for n, (_, r) in old.items()}
    # One run cannot show that a test is no longer flaky.
    results = {n: "flaky" if old.get(n, ("",))[0] == "flaky" else r
               for n, r in suite.results.items()}
    # The base cannot run the variants (PROGRAM@auto): keep their entries.
    results.update({n: r for n, (r, _) in old.items() if "@" in n})
    profile = guest_run.BASELINE_PROFILE[variant]
    header = [
        f"Results of the kselftest cgroup suite ({profile} profile) on the "
        "unpatched base",
        f"{base.label}, {variant} config, 2 vCPUs,",
        "4 GiB, TCG, cwd on ext4, 1 GiB swap (written by `make baseline`).",
        "Format: test result reason; flaky means seen both passing and",
        "failing.  Reasons and flaky marks are kept across rewrites.",
        "",
    ]
    path = guest_run.baseline_path(base, variant)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(baseline.render(results, reasons, header))
    log(f"wrote {path} (guest kernel {suite.guest_kernel or 'unknown'})")
    return 0


# --base's help: most commands work on one base, checkpatch on all.
ONE_BASE = "the kernel base, a [section] of base.conf (default: its default)"
EVERY_BASE = "only this base's series (default: every base's)"


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m harness",
                                     description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    def add(name, func, help_text, variant=False, unpatched=False,
            base=ONE_BASE):
        p = sub.add_parser(name, help=help_text)
        p.set_defaults(func=func)
        if base:
            p.add_argument("--base", metavar="VERSION", help=base)
        if variant:
            p.add_argument("--variant", default="lean",
                           choices=sorted(kconfig.VARIANTS))
        if unpatched:
            p.add_argument("--unpatched", action="store_true",
                           help="the unpatched base kernel, built from "
                           "build/BASE/linux-base")
        return p

    p = add("setup", cmd_setup,
            "install dependencies, create build/BASE/linux")
    p.add_argument("--refresh", action="store_true",
                   help="reset build/BASE/linux to the base + its series")
    add("export", cmd_export,
        "export build/BASE/linux base..HEAD to the base's series folder")
    add("checkpatch", cmd_checkpatch, "checkpatch.pl --strict every patch",
        base=EVERY_BASE)
    add("build", cmd_build, "build bzImage and kselftests", variant=True,
        unpatched=True)
    add("unit", cmd_unit, "run the harness unit tests", base=None)
    add("demo", cmd_demo, "build, boot and run the demonstration",
        variant=True)
    p = add("selftests", cmd_selftests,
            "run the cgroup kselftests in a VM, compare with the baseline",
            variant=True, unpatched=True)
    p.add_argument("--update-baseline", action="store_true",
                   help="write the results as the new baseline")
    p.add_argument("--profile", default="full",
                   choices=list(guest_run.PROFILES),
                   help="full: the whole suite; subset: what make check "
                   "runs on the debug kernel; backport: what it runs on "
                   "the backport; stress: the long run")
    p.add_argument("--no-build", action="store_true",
                   help="use the kernel already built")
    p = add("bench", cmd_bench, "run benchmark scenarios, write results/",
            variant=True)
    p.add_argument("scenarios", nargs="+", metavar="SCENARIO",
                   help=f"all, or some of: {', '.join(bench.SCENARIOS)}")
    p.add_argument("--rounds", type=int,
                   help="rounds per boot (default: the scenario's)")
    p.add_argument("--report-only", action="store_true",
                   help="rewrite the reports from the last run's results/*/"
                   "trials.jsonl and run.json (after editing a notes.md), "
                   "without running anything")
    add("bisect", cmd_bisect,
        "build and boot every commit of the series on its own",
        variant=True)
    p = add("mutants", cmd_mutants,
            "build and test each mutant of mutants/, update its table")
    p.add_argument("names", nargs="*", metavar="MUTANT",
                   help="only these (their rows of the table are updated)")
    p = add("repeat", cmd_repeat,
            "run cgroup kselftest programs many times in one boot",
            variant=True, unpatched=True)
    p.add_argument("programs", nargs="+", metavar="PROGRAM",
                   help="test programs, run in this order each round; "
                   "PROGRAM:TEST,TEST runs only those tests of a program "
                   "that takes test names (test_bgreclaim)")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--no-build", action="store_true",
                   help="use the kernel already built")
    p = add("stalls", cmd_stalls,
            "attribute the slow requests of a traced service run",
            base=None)
    p.add_argument("rundir", metavar="RUNDIR",
                   help="build/runs/bench-BASE-service-trace-N")
    p.add_argument("--rate", type=float, default=500,
                   help="the client's requests a second (SERVICE_RATE)")
    p.add_argument("--threshold-ms", type=float, default=50,
                   help="a request slower than this is slow")
    p.add_argument("--json", action="store_true")
    p = add("locks", cmd_locks,
            "the locks tasks waited for longest in a lockstat run",
            base=None)
    p.add_argument("rundir", metavar="RUNDIR",
                   help="build/runs/bench-BASE-SCENARIO-N of a scenario "
                   "run on the lockstat config")
    p.add_argument("--top", type=int, default=12,
                   help="how many classes to list per variant")
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except HarnessError as err:
        print(f"error: {err}", file=sys.stderr, flush=True)
        return 1
