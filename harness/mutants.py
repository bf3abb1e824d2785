"""Mutation testing of the series (`make mutants`, not part of `make
check`): each patch in mutants/ breaks one promise of the series' kernel
code, as the default base's series has it.  Apply it to the base's tree,
build, boot, run the series' tests as a profile of `make check` does, take
it back, and record which tests caught it.  A mutant that no test catches
shows a missing test."""

import os
import re
import time

from . import baseline, build, guest_run, tree
from .common import REPO, HarnessError, log, run

MUTANTS = os.path.join(REPO, "mutants")
TABLE = os.path.join(MUTANTS, "README.md")
# The header lines each mutant starts with, before its diff.
_HEADER = re.compile(r"^(Promise|Profile): (.*)$", re.M)


class Mutant:
    def __init__(self, path):
        self.path = path
        self.name = os.path.basename(path)[:-len(".patch")]
        with open(path, encoding="utf-8") as f:
            text = f.read()
        fields = dict(_HEADER.findall(text.split("\ndiff --git", 1)[0]))
        if "Promise" not in fields or "diff --git" not in text:
            raise HarnessError(f"{path}: a mutant needs a 'Promise: ...' "
                               "line and a diff")
        self.promise = fields["Promise"].strip()
        self.profile = fields.get("Profile", "mutant").strip()
        if self.profile not in guest_run.PROFILES:
            raise HarnessError(f"{path}: unknown profile {self.profile}")


def load(names=()):
    """The mutants in mutants/, or those named."""
    found = [Mutant(os.path.join(MUTANTS, f))
             for f in sorted(os.listdir(MUTANTS)) if f.endswith(".patch")]
    if names:
        unknown = set(names) - {m.name for m in found}
        if unknown:
            raise HarnessError(f"no such mutant: {', '.join(sorted(unknown))}")
        found = [m for m in found if m.name in names]
    return found


def stale(tree_dir, candidates=None):
    """The names of the mutants (all, or CANDIDATES) that no longer apply
    to the series' tree TREE_DIR: a later change moved the code they
    break, and `make mutants` would fail on them rather than test
    anything."""
    return [m.name for m in (load() if candidates is None else candidates)
            if run(["git", "-C", tree_dir, "apply", "--check", m.path],
                   check=False, capture=True, quiet=True).returncode]


def catchers(base, suite_run, profile):
    """The names of what failed SUITE_RUN on BASE: the tests that
    caught the mutant, or the run's own problems (a splat, a guest that
    did not finish)."""
    manifest = guest_run.load_manifest(profile)
    expected = guest_run.load_baseline(
        base, "lean", guest_run.PROFILES[profile].programs)
    cmp = baseline.compare(expected, suite_run.results, manifest,
                           suite_run.plans)
    caught = [name for name, _, _ in cmp.regressions]
    caught += [name for name, _ in cmp.new_failures]
    caught += [f"{name} ({now})" for name, now in cmp.absent]
    caught += [f"{name} (truncated)" for name, _ in cmp.truncated]
    caught += [f"run: {p.splitlines()[0]}" for p in suite_run.problems]
    # A failed subtest fails its program too: name the subtest.
    programs = {name.split(":")[0] for name in caught if ":" in name}
    return [name for name in caught if name not in programs]


def run_one(base, mutant):
    """Build and test one mutant on BASE; return what caught it."""
    run(["git", "-C", base.tree, "apply", mutant.path], quiet=True)
    try:
        out = os.path.join(base.out_dir, "mutant-lean")
        build.build_at(base, base.tree, out, "lean", with_series=True)
        suite_run = guest_run.run_selftests(
            base, "lean", profile=guest_run.PROFILES[mutant.profile],
            outdir=out)
    finally:
        run(["git", "-C", base.tree, "apply", "-R", mutant.path],
            quiet=True)
    return catchers(base, suite_run, mutant.profile)


def check(base, names=()):
    """Run the mutants (all, or those named) on BASE and update their rows
    of the table.  Returns the names of the mutants no test caught."""
    if tree.git(base, "status", "--porcelain", "--untracked-files=no"):
        raise HarnessError(f"{base.tree} has uncommitted changes; commit "
                           "or stash them first")
    mutants = load(names)
    # The kernel tree's hashes differ between clones; this repository's do
    # not.
    head = run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"],
               capture=True, quiet=True).stdout.strip()
    rows = read_table()
    missed = []
    for n, mutant in enumerate(mutants, 1):
        log(f"mutant [{n}/{len(mutants)}] {mutant.name}: {mutant.promise}")
        start = time.monotonic()
        caught = run_one(base, mutant)
        log(f"mutant {mutant.name}: "
            + (f"caught by {', '.join(caught)}" if caught else "NOT CAUGHT")
            + f" ({time.monotonic() - start:.0f}s)")
        rows[mutant.name] = ("<br>".join(caught) if caught
                             else "**not caught**",
                             f"{time.strftime('%Y-%m-%d')}, {head}")
        write_table(rows)
        if not caught:
            missed.append(mutant.name)
    return missed


# A row of the table: | mutant | promise | profile | caught by | run |
_ROW = re.compile(r"^\| (\S+) \| .* \| (\S+) \| (.*) \| (.*) \|$")


def read_table():
    """{mutant: (caught by, when and on which series)} from the table."""
    rows = {}
    if os.path.exists(TABLE):
        with open(TABLE, encoding="utf-8") as f:
            for line in f:
                m = _ROW.match(line.rstrip("\n"))
                if m and m.group(1) not in ("mutant", "---"):
                    rows[m.group(1)] = (m.group(3), m.group(4))
    return rows


def write_table(rows):
    """The table of every mutant in mutants/, from ROWS ({mutant: (caught
    by, run)}); a mutant not in ROWS has not run."""
    lines = [
        "# Mutants",
        "",
        "Each patch here breaks one promise of the series' kernel code, as",
        "the default base's series (patches/) has it.  `make mutants`",
        "applies each to that base's tree (build/BASE/linux), builds the lean",
        "kernel, runs the series' tests (the profile of `python3 -m harness",
        "selftests` named in the patch) and takes it back, and this table",
        "says what caught it, on which day and at which commit of this",
        "repository.  A mutant that no test catches shows a missing test.",
        "`python3 -m harness mutants NAME...` runs some and updates their",
        "rows.",
        "",
        "| mutant | promise broken | profile | caught by | run |",
        "| --- | --- | --- | --- | --- |",
    ]
    for mutant in load():
        caught, when = rows.get(mutant.name, ("not run", "-"))
        lines.append(f"| {mutant.name} | {mutant.promise} | "
                     f"{mutant.profile} | {caught} | {when} |")
    with open(TABLE, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
