"""The kernel working tree build/linux: the base as one commit tagged
`base`, patches/series applied on top with `git am`, one commit per patch."""

import glob
import os
import shutil
import subprocess
import tempfile

from . import deps
from .common import (BASE_TREE, BUILD, PATCHES, TREE, HarnessError, log,
                     output, run)

# Fixed identity and dates make the base commit, and so every exported
# patch's base, the same on every machine.
IDENTITY = {
    "GIT_AUTHOR_NAME": "bgreclaim harness",
    "GIT_AUTHOR_EMAIL": "harness@localhost",
    "GIT_COMMITTER_NAME": "bgreclaim harness",
    "GIT_COMMITTER_EMAIL": "harness@localhost",
}
BASE_DATE = "2025-01-01T00:00:00Z"
DEBIAN_BLOCK_MARK = "Debian packaging: ignore everything at the top level"
# The cover letter's text is written by hand in COVER_SOURCE; export
# writes COVER_LETTER from it with the series' short log and diffstat.
COVER_SOURCE = os.path.join(PATCHES, "cover-letter.txt")
COVER_LETTER = os.path.join(PATCHES, "0000-cover-letter.patch")
SUBJECT_MARK = "*** SUBJECT HERE ***"
BLURB_MARK = "*** BLURB HERE ***"


def git(*args, env=None, capture=True):
    """Run git in the kernel tree."""
    cmd = ["git", "-C", TREE] + list(args)
    if capture:
        return output(cmd)
    return run(cmd, env=env)


def strip_debian_ignore_block(text):
    """Drop Debian's packaging block (which ignores every top-level path,
    so new files such as mm/foo.c would silently not be committed) from a
    .gitignore; return the text unchanged when the block is absent."""
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if DEBIAN_BLOCK_MARK in line:
            start = i
            while start > 0 and lines[start - 1].strip() == "#":
                start -= 1
            while start > 0 and not lines[start - 1].strip():
                start -= 1
            return "".join(lines[:start])
    return text


def series():
    """Patch file names listed in patches/series, in order."""
    path = os.path.join(PATCHES, "series")
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        names = [ln.strip() for ln in f]
    return [n for n in names if n and not n.startswith("#")]


def has_series():
    """True when build/linux has commits on top of the base."""
    return git("rev-list", "--count", "base..HEAD") != "0"


def _patch_ids(patch_text):
    if not patch_text.strip():
        return []
    res = subprocess.run(["git", "patch-id", "--stable"], input=patch_text,
                         text=True, capture_output=True, check=True)
    return sorted(line.split()[0] for line in res.stdout.splitlines())


def _series_text():
    texts = []
    for name in series():
        with open(os.path.join(PATCHES, name), encoding="utf-8") as f:
            texts.append(f.read())
    return "".join(texts)


def unexported_work():
    """Describe work in the tree that patches/ does not hold, or ''."""
    problems = []
    dirty = git("status", "--porcelain", "--untracked-files=normal")
    if dirty:
        problems.append("uncommitted changes:\n" + dirty)
    tree_ids = _patch_ids(git("format-patch", "--stdout", "base..HEAD"))
    if tree_ids != _patch_ids(_series_text()):
        problems.append("commits base..HEAD differ from patches/series "
                        "(run `make export` first)")
    return "\n".join(problems)


def _create_base(tarball):
    staging = os.path.join(BUILD, "linux.new")
    shutil.rmtree(staging, ignore_errors=True)
    os.makedirs(staging)
    log(f"extracting {tarball}")
    run(["tar", "-xf", tarball, "-C", staging, "--strip-components=1"])
    gitignore = os.path.join(staging, ".gitignore")
    with open(gitignore, encoding="utf-8") as f:
        text = f.read()
    stripped = strip_debian_ignore_block(text)
    if stripped == text:
        log("note: no Debian packaging block found in .gitignore")
    with open(gitignore, "w", encoding="utf-8") as f:
        f.write(stripped)
    env = dict(IDENTITY, GIT_AUTHOR_DATE=BASE_DATE,
               GIT_COMMITTER_DATE=BASE_DATE)
    log("committing the base (about 90,000 files)")
    g = ["git", "-C", staging]
    run(g + ["init", "-q", "-b", "base-branch"])
    run(g + ["config", "user.name", IDENTITY["GIT_AUTHOR_NAME"]])
    run(g + ["config", "user.email", IDENTITY["GIT_AUTHOR_EMAIL"]])
    run(g + ["config", "core.abbrev", "12"])
    run(g + ["add", "-f", "-A"])
    run(g + ["commit", "-q", "-m", f"Base: {os.path.basename(tarball)}"],
        env=env)
    run(g + ["tag", "base"])
    run(g + ["checkout", "-q", "-b", "work"])
    os.rename(staging, TREE)


def apply_series():
    names = series()
    log(f"applying {len(names)} patch(es) from patches/series")
    for name in names:
        path = os.path.join(PATCHES, name)
        if not os.path.exists(path):
            raise HarnessError(f"patches/series names a missing file: {name}")
        try:
            run(["git", "-C", TREE, "am", "-q", "--committer-date-is-author-date",
                 path], env=IDENTITY)
        except HarnessError:
            run(["git", "-C", TREE, "am", "--abort"], check=False)
            raise HarnessError(f"patch does not apply: {name}") from None


def ensure_tree(tarball, refresh=False):
    """Create build/linux if absent.  With refresh, reset it to base plus
    the series, refusing when that would lose unexported work."""
    if not os.path.isdir(os.path.join(TREE, ".git")):
        if os.path.exists(TREE):
            raise HarnessError(f"{TREE} exists but is not a git tree; "
                               "move it away")
        _create_base(tarball)
        apply_series()
        return
    if not refresh:
        return
    problems = unexported_work()
    if problems:
        raise HarnessError("refusing to refresh build/linux, it holds work "
                           "not in patches/:\n" + problems)
    git("checkout", "-q", "-B", "work", "base", capture=False)
    apply_series()


def ensure_base_worktree():
    """Check the tag `base` out alone in build/linux-base (a worktree of
    build/linux), so the unpatched kernel builds beside the patched one."""
    res = run(["git", "-C", BASE_TREE, "rev-parse", "HEAD", "base"],
              check=False, capture=True, quiet=True)
    heads = res.stdout.split() if res.returncode == 0 else []
    if len(heads) == 2 and heads[0] == heads[1]:
        return BASE_TREE
    # Missing, or left over from an earlier build/linux: make it afresh.
    shutil.rmtree(BASE_TREE, ignore_errors=True)
    git("worktree", "prune", capture=False)
    log(f"checking the base out in {os.path.relpath(BASE_TREE)}")
    git("worktree", "add", "-q", "--detach", BASE_TREE, "base",
        capture=False)
    return BASE_TREE


def export():
    """Write base..HEAD into patches/ as stable, diffable files."""
    dirty = git("status", "--porcelain", "--untracked-files=normal")
    if dirty:
        raise HarnessError("commit your changes in build/linux first:\n"
                           + dirty)
    for old in glob.glob(os.path.join(PATCHES, "*.patch")):
        os.remove(old)
    os.makedirs(PATCHES, exist_ok=True)
    names = git("format-patch", "--zero-commit", "--no-signature",
                "--no-numbered", "--abbrev=12", "-o", PATCHES,
                "base..HEAD").splitlines()
    names = [os.path.basename(n) for n in names]
    with open(os.path.join(PATCHES, "series"), "w", encoding="utf-8") as f:
        f.writelines(n + "\n" for n in names)
    log(f"exported {len(names)} patch(es) to patches/")
    if os.path.exists(COVER_SOURCE):
        with open(COVER_LETTER, "w", encoding="utf-8") as f:
            f.write(cover_letter())
        log(f"wrote {os.path.basename(COVER_LETTER)} from "
            f"{os.path.basename(COVER_SOURCE)}")
    return names


def fill_cover_letter(generated, source, date):
    """git format-patch's cover letter with the subject and blurb of
    `source` (its first line, then a blank line, then the body) in place of
    git's placeholders, and `date` as its Date, so that exporting the same
    commits always writes the same file."""
    subject, sep, body = source.partition("\n\n")
    if not sep or "\n" in subject.strip() or not subject.strip():
        raise HarnessError(f"{COVER_SOURCE}: the first line is the subject, "
                           "then a blank line, then the body")
    for mark in (SUBJECT_MARK, BLURB_MARK):
        if generated.count(mark) != 1:
            raise HarnessError(f"git's cover letter has no single {mark}")
    head, sep, rest = generated.partition("\n\n")
    head = "\n".join(f"Date: {date}" if ln.startswith("Date: ") else ln
                     for ln in head.split("\n"))
    return (head.replace(SUBJECT_MARK, subject.strip()) + sep
            + rest.replace(BLURB_MARK, body.rstrip("\n")))


def cover_letter():
    """The series' cover letter: patches/cover-letter.txt with the short
    log and diffstat of base..HEAD, as `git format-patch --cover-letter`
    writes them, from the identity and date of the series' last commit."""
    name, email, date = git("log", "-1", "--format=%an%n%ae%n%aD",
                            "HEAD").splitlines()
    with tempfile.TemporaryDirectory() as out:
        run(["git", "-C", TREE, "format-patch", "--cover-letter",
             "--zero-commit", "--no-signature", "--abbrev=12", "-q", "-o",
             out, "base..HEAD"], quiet=True,
            env={"GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email})
        with open(os.path.join(out, "0000-cover-letter.patch"),
                  encoding="utf-8") as f:
            generated = f.read()
    with open(COVER_SOURCE, encoding="utf-8") as f:
        source = f.read()
    return fill_cover_letter(generated, source, date)


def cover_letter_problem():
    """Why patches/0000-cover-letter.patch is not what export would write
    now, or None."""
    if not os.path.exists(COVER_SOURCE):
        return f"{COVER_SOURCE} is missing"
    if not os.path.exists(COVER_LETTER):
        return f"{COVER_LETTER} is missing: run python3 -m harness export"
    with open(COVER_LETTER, encoding="utf-8") as f:
        if f.read() != cover_letter():
            return (f"{COVER_LETTER} differs from what export writes from "
                    f"{os.path.basename(COVER_SOURCE)} and the series: "
                    "run python3 -m harness export")
    return None


def checkpatch():
    """Run checkpatch.pl --strict on every patch; return the failures."""
    names = series()
    if not names:
        log("checkpatch: the series is empty, nothing to check")
        return []
    failed = []
    problem = cover_letter_problem()
    log(f"cover letter: {problem or 'ok'}")
    if problem:
        failed.append(os.path.basename(COVER_LETTER))
    for name in names:
        res = run(["perl", "scripts/checkpatch.pl", "--strict",
                   os.path.join(PATCHES, name)], cwd=TREE, check=False,
                  quiet=True, capture=True, env=deps.venv_env())
        status = "ok" if res.returncode == 0 else "FAILED"
        log(f"checkpatch {name}: {status}")
        if res.returncode != 0:
            print(res.stdout, res.stderr, flush=True)
            failed.append(name)
    return failed
