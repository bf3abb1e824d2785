#!/usr/bin/env python3
"""Run a guest command as a child subreaper, reaping every orphan.

virtme-ng-init, the guest's PID 1, does not reap orphaned processes, and
an unreaped zombie keeps its cgroup alive: a cgroup removed after a
shell loop's child was killed stayed dying for good and failed the
stress phases' leak check.  Orphans of the command are reparented here
instead, and reaped.  Exits with the command's exit code.
usage: reap.py COMMAND [ARG...]"""

import ctypes
import os
import sys

PR_SET_CHILD_SUBREAPER = 36


def main(argv):
    if not argv:
        sys.exit(__doc__.rsplit("\n", 1)[-1])
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        sys.exit(f"reap.py: prctl: {os.strerror(ctypes.get_errno())}")
    command = os.fork()
    if command == 0:
        try:
            os.execvp(argv[0], argv)
        except OSError as err:
            print(f"reap.py: {argv[0]}: {err.strerror}", file=sys.stderr)
            os._exit(127)
    while True:
        pid, status = os.wait()
        if pid == command:
            return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
