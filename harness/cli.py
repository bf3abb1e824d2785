"""Command line of the harness: python3 -m harness COMMAND."""

import argparse
import os
import sys
import time
import unittest

from . import baseline, build, deps, guest_run, kconfig, tree
from .common import REPO, HarnessError, log


def _prepare(variant, refresh=False):
    deps.ensure_all()
    tree.ensure_tree(deps.read_base_conf()["tarball"], refresh=refresh)
    return build.build(variant)


def cmd_setup(args):
    deps.ensure_all()
    tree.ensure_tree(deps.read_base_conf()["tarball"], refresh=args.refresh)
    return 0


def cmd_export(_args):
    tree.export()
    return 0


def cmd_checkpatch(_args):
    deps.ensure_all()
    tree.ensure_tree(deps.read_base_conf()["tarball"])
    failed = tree.checkpatch()
    if failed:
        log(f"checkpatch failed: {', '.join(failed)}")
        return 1
    return 0


def cmd_build(args):
    _prepare(args.variant)
    return 0


def cmd_unit(_args):
    suite = unittest.defaultTestLoader.discover(
        os.path.join(REPO, "tests"), top_level_dir=REPO)
    res = unittest.TextTestRunner(verbosity=1).run(suite)
    return 0 if res.wasSuccessful() else 1


def cmd_demo(args):
    _prepare(args.variant)
    problems = guest_run.run_demo(args.variant)
    for p in problems:
        print(p)
    return 1 if problems else 0


def cmd_selftests(args):
    """Run the suite and compare with the baseline (or rewrite it)."""
    if not args.no_build:
        _prepare(args.variant)
    start = time.monotonic()
    results, problems = guest_run.run_selftests(args.variant)
    log(f"suite ran in {time.monotonic() - start:.0f}s")
    if args.update_baseline:
        return _write_baseline(results, problems)
    base = guest_run.load_baseline()
    cmp = baseline.compare(base, results)
    text = baseline.report(cmp, base)
    if text:
        print(text)
    for p in problems:
        print(p)
    ok = cmp.ok and not problems
    print(f"cgroup selftests ({args.variant}): "
          f"{'OK' if ok else 'FAILED'}", flush=True)
    print(guest_run.summary_line(results, cmp), flush=True)
    return 0 if ok else 1


def _write_baseline(results, problems):
    if problems:
        for p in problems:
            print(p)
        log("not writing a baseline from a run with problems")
        return 1
    try:
        old = guest_run.load_baseline()
    except HarnessError:
        old = {}
    reasons = {n: r for n, (_, r) in old.items()}
    # One run cannot show that a test is no longer flaky.
    results = {n: "flaky" if old.get(n, ("",))[0] == "flaky" else r
               for n, r in results.items()}
    conf = deps.read_base_conf()
    header = [
        "Results of the kselftest cgroup suite on the unpatched base",
        f"{conf['package']} {conf['version']}, lean config, 2 vCPUs,",
        "4 GiB, TCG, cwd on ext4, 1 GiB swap (written by `make baseline`).",
        "Format: test result reason; flaky means seen both passing and",
        "failing.  Reasons and flaky marks are kept across rewrites.",
        "",
    ]
    with open(guest_run.BASELINE, "w", encoding="utf-8") as f:
        f.write(baseline.render(results, reasons, header))
    log(f"wrote {guest_run.BASELINE}")
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m harness",
                                     description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    def add(name, func, help_text, variant=False):
        p = sub.add_parser(name, help=help_text)
        p.set_defaults(func=func)
        if variant:
            p.add_argument("--variant", default="lean",
                           choices=sorted(kconfig.VARIANTS))
        return p

    p = add("setup", cmd_setup, "install dependencies, create build/linux")
    p.add_argument("--refresh", action="store_true",
                   help="reset build/linux to base + patches/series")
    add("export", cmd_export, "export build/linux base..HEAD to patches/")
    add("checkpatch", cmd_checkpatch, "checkpatch.pl --strict every patch")
    add("build", cmd_build, "build bzImage and kselftests", variant=True)
    add("unit", cmd_unit, "run the harness unit tests")
    add("demo", cmd_demo, "build, boot and run the demonstration",
        variant=True)
    p = add("selftests", cmd_selftests,
            "run the cgroup kselftests in a VM, compare with the baseline",
            variant=True)
    p.add_argument("--update-baseline", action="store_true",
                   help="write the results as the new baseline")
    p.add_argument("--no-build", action="store_true",
                   help="use the kernel already built")
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except HarnessError as err:
        print(f"error: {err}", file=sys.stderr, flush=True)
        return 1
