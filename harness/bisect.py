"""Build and boot every commit of the series on its own: each patch must
leave a kernel that builds, boots and passes its KUnit tests."""

import os

from . import build, guest_run, splat, tap, tree, vm
from .common import GUEST, HarnessError, log

NAME = "bisect"


def _boot_check(base, out, variant, label):
    rdir = guest_run.rundir(f"{NAME}-{base.name}-{variant}")
    console = vm.boot(os.path.join(out, build.IMAGE), rdir,
                      [os.path.join(GUEST, "smoke.sh"), rdir], timeout=900)
    problems = guest_run.check_guest_log(rdir, console)
    kunit = tap.parse_kunit(splat.kernel_messages(console))
    problems += [f"KUnit {name}: {result}" for name, result in kunit.items()
                 if result == "fail"]
    exit_code = guest_run.read_exit_code(rdir)
    if exit_code not in (None, "0"):
        problems.append(f"the smoke test exited with {exit_code}")
    return [f"{label}: {p}" for p in problems]


def check(base, variant):
    """Build and boot base..HEAD one commit at a time in the base's tree,
    then return it to where it was.  Returns the problems found."""
    if tree.git(base, "status", "--porcelain", "--untracked-files=no"):
        raise HarnessError(f"{base.tree} has uncommitted changes; commit "
                           "or stash them first")
    commits = tree.git(base, "rev-list", "--reverse", "base..HEAD").split()
    if not commits:
        raise HarnessError("no commits on top of the base to check")
    start = tree.git(base, "rev-parse", "--abbrev-ref", "HEAD")
    if start == "HEAD":
        start = tree.git(base, "rev-parse", "HEAD")
    out = os.path.join(base.out_dir, f"{NAME}-{variant}")
    problems = []
    try:
        for n, sha in enumerate(commits, 1):
            subject = tree.git(base, "log", "-1", "--format=%s", sha)
            label = f"[{n}/{len(commits)}] {subject}"
            log(f"bisectability {label}")
            tree.git(base, "checkout", "-q", "--detach", sha, capture=False)
            # One commit that fails must not hide the verdicts of the
            # commits after it.
            try:
                build.build_at(base, base.tree, out, variant,
                               with_series=True, selftests=False,
                               partial_series=True)
            except HarnessError as e:
                found = [f"{label}: does not build: {e}"]
            else:
                found = _boot_check(base, out, variant, label)
            # Said as each commit is done: a run of hours stopped early
            # still tells which commits passed.
            for line in found or [f"{label}: builds, boots, KUnit and "
                                  "smoke test pass"]:
                log(line)
            problems += found
    finally:
        tree.git(base, "checkout", "-q", start, capture=False)
    return problems
