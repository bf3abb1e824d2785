"""Paths, logging and subprocess helpers shared by the harness modules."""

import os
import subprocess
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(REPO, "build")
CONFIGS = os.path.join(REPO, "configs")
GUEST = os.path.join(REPO, "guest")

_START = time.monotonic()


class HarnessError(Exception):
    """A failure the user can act on; printed without a traceback."""


def log(msg):
    """Print a progress line with the time since the harness started."""
    elapsed = int(time.monotonic() - _START)
    print(f"[{elapsed // 60:3d}:{elapsed % 60:02d}] {msg}", flush=True)


def run(cmd, cwd=None, env=None, check=True, capture=False, quiet=False):
    """Run a command; raise HarnessError naming it when it fails."""
    if not quiet:
        log("$ " + " ".join(cmd))
    full_env = dict(os.environ, **env) if env else None
    res = subprocess.run(cmd, cwd=cwd, env=full_env, text=True,
                         stdout=subprocess.PIPE if capture else None,
                         stderr=subprocess.PIPE if capture else None)
    if check and res.returncode != 0:
        detail = (res.stderr or "").strip() if capture else ""
        raise HarnessError(f"command failed ({res.returncode}): "
                           f"{' '.join(cmd)}" + (f"\n{detail}" if detail else ""))
    return res


def output(cmd, cwd=None):
    """Run a command and return its stripped standard output."""
    return run(cmd, cwd=cwd, capture=True, quiet=True).stdout.strip()

