"""Each base's kernel working tree, build/BASE/linux: the base as one
commit tagged `base`, the base's series (base.conf's `series` folder)
applied on top with `git am`, one commit per patch."""

import glob
import os
import shutil
import subprocess
import tempfile

from . import deps
from .common import REPO, HarnessError, log, output, run

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
# A series with a cover letter (the one to be posted) has its text,
# written by hand, in COVER_SOURCE; export writes COVER_LETTER from it
# with the series' short log and diffstat.
COVER_SOURCE = "cover-letter.txt"
COVER_LETTER = "0000-cover-letter.patch"
SUBJECT_MARK = "*** SUBJECT HERE ***"
BLURB_MARK = "*** BLURB HERE ***"


def git(base, *args, env=None, capture=True):
    """Run git in the base's kernel tree."""
    cmd = ["git", "-C", base.tree] + list(args)
    if capture:
        return output(cmd)
    return run(cmd, env=env)


def _rel(path):
    """PATH as messages name it: from the repository's top."""
    return os.path.relpath(path, REPO)


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


def series(base):
    """Patch file names the base's series file lists, in order."""
    path = os.path.join(base.series_dir, "series")
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        names = [ln.strip() for ln in f]
    return [n for n in names if n and not n.startswith("#")]


def has_series(base):
    """True when the base's tree has commits on top of the base."""
    return git(base, "rev-list", "--count", "base..HEAD") != "0"


def _patch_ids(patch_text):
    if not patch_text.strip():
        return []
    res = subprocess.run(["git", "patch-id", "--stable"], input=patch_text,
                         text=True, capture_output=True, check=True)
    return sorted(line.split()[0] for line in res.stdout.splitlines())


def _series_text(base):
    texts = []
    for name in series(base):
        with open(os.path.join(base.series_dir, name),
                  encoding="utf-8") as f:
            texts.append(f.read())
    return "".join(texts)


def unexported_work(base):
    """Describe work in the base's tree that its series folder does not
    hold, or ''."""
    problems = []
    dirty = git(base, "status", "--porcelain", "--untracked-files=normal")
    if dirty:
        problems.append("uncommitted changes:\n" + dirty)
    tree_ids = _patch_ids(git(base, "format-patch", "--stdout",
                              "base..HEAD"))
    if tree_ids != _patch_ids(_series_text(base)):
        problems.append(f"commits base..HEAD differ from {base.series}/"
                        "series (run `make export` first)")
    return "\n".join(problems)


def _create_base(base):
    tarball = base.tarball_path
    staging = base.tree + ".new"
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
    os.rename(staging, base.tree)


def apply_series(base):
    names = series(base)
    log(f"applying {len(names)} patch(es) from {base.series}/series")
    for name in names:
        path = os.path.join(base.series_dir, name)
        if not os.path.exists(path):
            raise HarnessError(f"{base.series}/series names a missing "
                               f"file: {name}")
        try:
            git(base, "am", "-q", "--committer-date-is-author-date", path,
                env=IDENTITY, capture=False)
        except HarnessError:
            run(["git", "-C", base.tree, "am", "--abort"], check=False)
            raise HarnessError(f"patch does not apply: {name}") from None


def ensure_tree(base, refresh=False):
    """Create the base's tree if absent, from its tarball
    (deps.ensure_base()).  With refresh, reset it to the base plus the
    series, refusing when that would lose unexported work."""
    if not os.path.isdir(os.path.join(base.tree, ".git")):
        if os.path.exists(base.tree):
            raise HarnessError(f"{base.tree} exists but is not a git tree; "
                               "move it away")
        _create_base(base)
        apply_series(base)
        return
    if not refresh:
        return
    problems = unexported_work(base)
    if problems:
        raise HarnessError(f"refusing to refresh {_rel(base.tree)}, it "
                           f"holds work not in {base.series}/:\n" + problems)
    git(base, "checkout", "-q", "-B", "work", "base", capture=False)
    apply_series(base)


def ensure_unpatched_worktree(base):
    """Check the tag `base` out alone in the base's unpatched tree (a
    worktree of its tree), so the unpatched kernel builds beside the
    patched one."""
    path = base.unpatched_tree
    res = run(["git", "-C", path, "rev-parse", "HEAD", "base"],
              check=False, capture=True, quiet=True)
    heads = res.stdout.split() if res.returncode == 0 else []
    if len(heads) == 2 and heads[0] == heads[1]:
        return path
    # Missing, or left over from an earlier tree: make it afresh.
    shutil.rmtree(path, ignore_errors=True)
    git(base, "worktree", "prune", capture=False)
    log(f"checking the base out in {_rel(path)}")
    git(base, "worktree", "add", "-q", "--detach", path, "base",
        capture=False)
    return path


def export(base):
    """Write base..HEAD into the base's series folder as stable, diffable
    files, and the cover letter where the folder has its text."""
    dirty = git(base, "status", "--porcelain", "--untracked-files=normal")
    if dirty:
        raise HarnessError(f"commit your changes in {_rel(base.tree)} "
                           "first:\n" + dirty)
    out = base.series_dir
    for old in glob.glob(os.path.join(out, "*.patch")):
        os.remove(old)
    os.makedirs(out, exist_ok=True)
    names = git(base, "format-patch", "--zero-commit", "--no-signature",
                "--no-numbered", "--abbrev=12", "-o", out,
                "base..HEAD").splitlines()
    names = [os.path.basename(n) for n in names]
    with open(os.path.join(out, "series"), "w", encoding="utf-8") as f:
        f.writelines(n + "\n" for n in names)
    log(f"exported {len(names)} patch(es) to {base.series}/")
    # An empty series has nothing for a cover letter to introduce.
    if names and os.path.exists(os.path.join(out, COVER_SOURCE)):
        with open(os.path.join(out, COVER_LETTER), "w",
                  encoding="utf-8") as f:
            f.write(cover_letter(base))
        log(f"wrote {COVER_LETTER} from {COVER_SOURCE}")
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


def cover_letter(base):
    """The series' cover letter: its cover-letter.txt with the short log
    and diffstat of base..HEAD, as `git format-patch --cover-letter`
    writes them, from the identity and date of the series' last commit."""
    name, email, date = git(base, "log", "-1", "--format=%an%n%ae%n%aD",
                            "HEAD").splitlines()
    with tempfile.TemporaryDirectory() as out:
        run(["git", "-C", base.tree, "format-patch", "--cover-letter",
             "--zero-commit", "--no-signature", "--abbrev=12", "-q", "-o",
             out, "base..HEAD"], quiet=True,
            env={"GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email})
        with open(os.path.join(out, COVER_LETTER), encoding="utf-8") as f:
            generated = f.read()
    with open(os.path.join(base.series_dir, COVER_SOURCE),
              encoding="utf-8") as f:
        source = f.read()
    return fill_cover_letter(generated, source, date)


def cover_letter_problem(base):
    """Why the series' 0000-cover-letter.patch is not what export would
    write now, or None."""
    path = os.path.join(base.series_dir, COVER_LETTER)
    if not os.path.exists(path):
        return f"{_rel(path)} is missing: run python3 -m harness export"
    with open(path, encoding="utf-8") as f:
        if f.read() != cover_letter(base):
            return (f"{_rel(path)} differs from what export writes from "
                    f"{COVER_SOURCE} and the series: run python3 -m "
                    "harness export")
    return None


def checkpatch(base):
    """Run the base's checkpatch.pl --strict on every patch of its
    series, and check the cover letter where the series has one; return
    the failures, as paths in the repository."""
    names = series(base)
    if not names:
        log(f"checkpatch: {base.series}/series is empty, nothing to check")
        return []
    failed = []
    if os.path.exists(os.path.join(base.series_dir, COVER_SOURCE)):
        problem = cover_letter_problem(base)
        log(f"cover letter: {problem or 'ok'}")
        if problem:
            failed.append(os.path.join(base.series, COVER_LETTER))
    for name in names:
        path = os.path.join(base.series, name)
        res = run(["perl", "scripts/checkpatch.pl", "--strict",
                   os.path.join(REPO, path)], cwd=base.tree, check=False,
                  quiet=True, capture=True, env=deps.venv_env())
        status = "ok" if res.returncode == 0 else "FAILED"
        log(f"checkpatch {path}: {status}")
        if res.returncode != 0:
            print(res.stdout, res.stderr, flush=True)
            failed.append(path)
    return failed
