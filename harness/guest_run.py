"""Run the cgroup kselftests or the demo in a VM and judge the outcome."""

import os

from . import baseline, build, splat, tap, vm
from .common import BUILD, GUEST, REPO, HarnessError, run

BASELINE = os.path.join(REPO, "baseline", "cgroup-selftests.txt")
TEST_TIMEOUT = 600          # per test program, in the guest (TCG is slow)
SUITE_TIMEOUT = 2400        # the whole boot


def rundir(name):
    return vm.fresh_rundir(os.path.join(BUILD, "runs", name))


def _read(path):
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def check_guest_log(rdir, console):
    """Splats anywhere in the console or dmesg fail the run; so does a
    guest script that never reported back."""
    problems = []
    dmesg = _read(os.path.join(rdir, "dmesg.txt")) or ""
    found = splat.find_splats(console) or splat.find_splats(dmesg)
    if found:
        problems.append(splat.format_splats(found))
    if _read(os.path.join(rdir, "exit-code")) is None:
        problems.append("the guest script did not finish (no exit code); "
                        f"see {os.path.join(rdir, 'console.log')}")
    return problems


def run_selftests(variant):
    """Boot the variant, run the suite; return (results, problems)."""
    kernel = build.kernel_image(variant)
    rdir = rundir(f"selftests-{variant}")
    console = vm.boot(kernel, rdir,
                      [os.path.join(GUEST, "run-selftests.sh"), rdir,
                       build.kselftest_dir(variant), str(TEST_TIMEOUT)],
                      timeout=SUITE_TIMEOUT)
    problems = check_guest_log(rdir, console)
    results = tap.parse(_read(os.path.join(rdir, "tap.txt")) or "")
    # Built-in KUnit suites ran at boot and reported on the console.
    results.update(tap.parse_kunit(splat.kernel_messages(console)))
    if not results:
        problems.append("no test results were produced")
    return results, problems


def load_baseline():
    text = _read(BASELINE)
    if text is None:
        raise HarnessError(f"missing {BASELINE}; run `make baseline` on "
                           "the unpatched base")
    return baseline.parse(text)


def summary_line(results, cmp):
    """'N passed, N failed, N skipped' over the guest tests.  Failures the
    base kernel has too are counted as failed, never hidden; so are tests
    that went missing and new tests that skipped."""
    passed, failed, skipped = tap.counts(results)
    missing = sum(1 for _, _, now in cmp.regressions if now == "missing")
    new_skips = sum(1 for _, now in cmp.new_failures if now == "skip")
    return (f"{passed} passed, {failed + missing + new_skips} failed, "
            f"{skipped - new_skips} skipped")


def compile_memhog():
    out = os.path.join(BUILD, "guest")
    os.makedirs(out, exist_ok=True)
    binary = os.path.join(out, "memhog")
    run(["gcc", "-O2", "-Wall", "-Wextra", "-Werror", "-o", binary,
         os.path.join(GUEST, "memhog.c")], quiet=True)
    return binary


def run_demo(variant):
    kernel = build.kernel_image(variant)
    memhog = compile_memhog()
    rdir = rundir("demo")
    console = vm.boot(kernel, rdir, [os.path.join(GUEST, "demo.sh"), rdir,
                                     memhog], timeout=1800)
    return check_guest_log(rdir, console)
