"""Run the cgroup kselftests or the demo in a VM and judge the outcome."""

import os
import re
from dataclasses import dataclass

from . import baseline, build, splat, tap, tree, vm
from .common import BUILD, GUEST, REPO, HarnessError, run

# What a kernel with the series must produce, whatever its base.
MANIFEST = os.path.join(REPO, "baseline", "expected.txt")
TEST_TIMEOUT = 600          # per test program, in the guest (TCG is slow)
SUITE_TIMEOUT = 2400        # the whole boot, unless the profile says more
# The series' events that test_bgreclaim and stress.sh trace, on from boot:
# turning an event on at run time patches kernel text, which has oopsed
# guests under QEMU's multi-threaded TCG ("Oops: int3"), so the tests find
# them on and only start and stop the ring buffer.  stress.sh reads the
# lruvec events and kswapd's shared passes in a trace instance of its own:
# with them on from boot, turning them on there adds a probe to a
# tracepoint already on, which patches no text.
SERIES_TRACE_EVENTS = tuple(
    "vmscan:mm_vmscan_memcg_bgreclaim_" + event
    for event in ("queue", "begin", "end", "lruvec_enter", "lruvec_leave")
) + ("vmscan:mm_vmscan_kswapd_helped_pass",)


def boot_trace_events(base, unpatched):
    """The trace events to turn on at boot for BASE's kernel: the series'
    where its selftests expect them on, none on the unpatched base."""
    return SERIES_TRACE_EVENTS if base.trace_at_boot and not unpatched else ()


def rundir(name):
    return vm.fresh_rundir(os.path.join(BUILD, "runs", name))


def _read(path):
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def read_exit_code(rdir):
    """What the guest script reported as its exit code, or None."""
    text = _read(os.path.join(rdir, "exit-code"))
    return None if text is None else text.strip()


def check_guest_log(rdir, console):
    """Splats anywhere in the console or dmesg fail the run; so does a
    guest script that never reported back."""
    problems = []
    dmesg = _read(os.path.join(rdir, "dmesg.txt")) or ""
    found = splat.find_splats(console) or splat.find_splats(dmesg)
    if found:
        problems.append(splat.format_splats(found))
    if read_exit_code(rdir) is None:
        problems.append("the guest script did not finish (no exit code); "
                        f"see {os.path.join(rdir, 'console.log')}")
    return problems


class Profile:
    """What a selftests run covers: the kselftest PROGRAMS (all when
    empty, none when None), then, on a kernel with the series, fuzz inputs
    for memory.reclaim_wmarks and the race stress phases (guest/stress.sh:
    STRESS_PHASES, or its default ones), all in one boot of at most
    TIMEOUT seconds, each program at most TEST_TIMEOUT, on a guest of CPUS
    vCPUs in NUMA_NODES nodes, all run by one host thread with ONE_THREAD
    (vm.boot()).  BGRECLAIM_TESTS names the set of test_bgreclaim's tests
    its plain pass runs (guest/run-selftests.sh: all, numa, debug)."""

    def __init__(self, programs, fuzz_inputs, stress_cycles, stress_seconds,
                 timeout=SUITE_TIMEOUT, test_timeout=TEST_TIMEOUT,
                 numa_nodes=1, cpus=2, stress_phases=(), one_thread=False,
                 bgreclaim_tests="all"):
        self.programs = programs
        self.bgreclaim_tests = bgreclaim_tests
        self.one_thread = one_thread
        self.numa_nodes = numa_nodes
        self.cpus = cpus
        self.stress_phases = stress_phases
        self.fuzz_inputs = fuzz_inputs
        self.stress_cycles = stress_cycles
        self.stress_seconds = stress_seconds
        self.timeout = timeout
        self.test_timeout = test_timeout


def _helpers_guest(stress_phases):
    """kswapd's helpers need CPUs with nothing to run (on two vCPUs they
    never ran): two nodes of two vCPUs each, for the cgroups that opted in
    and for no other.  One host thread runs the four vCPUs in turn, so
    none waits for a host core while the guest thinks it runs (with a
    thread per vCPU on two host cores, one CI run of three saw an RCU
    stall report from a starved vCPU).  Not on the instruction clock
    (-icount) any more: there, twice in CI and never here, the guest fell
    silent in stress-kswapd for half an hour, without the hung task report
    or stress.sh's stall report its own clock would have printed.  The
    series' tests run on the other guests, at the host's pace."""
    return Profile(None, 100, 1, 30, numa_nodes=2, cpus=4,
                   stress_phases=stress_phases, one_thread=True)


PROFILES = {
    # The whole suite against the baseline, with a short fuzz run; the
    # stress phases are for the debug kernel, whose checkers they feed.
    "full": Profile([], 3000, 0, 0),
    # What `make check` runs on the debug kernel within CI's time: the
    # series' own tests but four that only measure, the memcg tests
    # nearest to it, and the stress phases.
    "subset": Profile(["test_bgreclaim", "test_memcontrol", "test_core"],
                      1500, 30, 10, bgreclaim_tests="debug"),
    # The long run (`make stress`): on the debug kernel the fuzzer takes
    # about 10 minutes (more on a loaded host: 600 s was too tight) and
    # each churn cycle over half a second.
    "stress": Profile(["test_bgreclaim"], 50000, 2000, 60, 4 * 3600,
                      test_timeout=1800),
    # The series' tests where the node layout matters, on a guest of two
    # NUMA nodes, one vCPU each, on the lean kernel: the pool's bound is
    # the machine's, not a node's.
    "numa": Profile(["test_bgreclaim"], 200, 0, 0, numa_nodes=2,
                    bgreclaim_tests="numa"),
    # kswapd's helpers beside stock kswapd, and with them off.
    "helpers": _helpers_guest(("kswapd", "helpers-off")),
    # The MGLRU passes kswapd shares with its helpers (`make
    # selftests-kswapd-target`), not in `make check`: its bound is only
    # tested by a pass that reaches its target, and on this host few do
    # (none in 4 minutes of the CI run of 2026-11-27, 5 of 1279 passes in
    # stop 35's, 1 of 842 in 7 runs before), so in CI it mostly skipped
    # after 4 of its 9 minutes.
    "kswapd-target": _helpers_guest(("kswapd-target",)),
    # What `make mutants` runs on a mutant whose patch names no profile:
    # the series' tests on the lean kernel, without the rest of the suite.
    "mutant": Profile(["test_bgreclaim"], 300, 0, 0),
    # What `make check` runs on the backport's lean kernel: the series'
    # own tests, the memory controller's beside them (with their @auto
    # pass), the KUnit suites and the fuzzer.  The rest of the suite, the
    # other guests and the debug kernel run on the default base only, to
    # keep CI within its time.  test_bgreclaim's plain pass leaves out
    # test_bgr_gives_way (backports/6.12/README.md says why).
    "backport": Profile(["test_bgreclaim", "test_memcontrol"], 300, 0, 0,
                        bgreclaim_tests="backport"),
}


@dataclass
class SuiteRun:
    """What a selftests run produced: RESULTS, PLANS and NOTES as
    tap.parse() gives them, the PROBLEMS that fail it whatever the
    results, and the kernel release the guest reported (None if it never
    got to say)."""
    results: dict
    plans: dict
    notes: dict
    problems: list
    guest_kernel: str | None


# run-selftests.sh's first line: "guest: $(uname -r), N CPUs, ...".
_GUEST_KERNEL = re.compile(r"^guest: ([^\s,]+),", re.M)


def guest_kernel(console):
    """The kernel release the guest reported on its console, or None."""
    found = _GUEST_KERNEL.search(console)
    return found and found.group(1)


def run_selftests(base, variant, unpatched=False, profile=PROFILES["full"],
                  outdir=None):
    """Boot the variant of BASE (built in OUTDIR, if not in its own), run
    the profile; return a SuiteRun."""
    if outdir:
        kernel = os.path.join(outdir, build.IMAGE)
        kselftest = os.path.join(outdir, "kselftest-install")
    else:
        kernel = build.kernel_image(base, variant, unpatched)
        kselftest = build.kselftest_dir(base, variant, unpatched)
    suffix = ("-numa" if profile.numa_nodes > 1 else "") + \
        ("-1thread" if profile.one_thread else "")
    name = f"{base.name}-{os.path.basename(outdir)}" if outdir else \
        build.kernel_name(base, variant, unpatched)
    rdir = rundir(f"selftests-{name}{suffix}")
    # The first run of `make baseline` for a base and variant has no
    # baseline yet.
    have_baseline = os.path.exists(baseline_path(base, variant))
    report = tap.LiveReport(_load_baseline(base, variant) if have_baseline
                            else {})
    programs = profile.programs
    if unpatched and programs:
        # The base has none of the series' programs (test_bgreclaim).
        installed = os.path.join(kselftest, "cgroup")
        programs = [p for p in programs
                    if os.path.exists(os.path.join(installed, p))]
    if programs is None:
        # The guest gets its command as one string, where an empty
        # argument would vanish: "none" stands for no program.
        programs = ["none"]
    console = vm.boot(kernel, rdir,
                      [os.path.join(GUEST, "run-selftests.sh"), rdir,
                       kselftest,
                       str(profile.test_timeout),
                       compile_guest_programs(),
                       tree.ensure_unpatched_worktree(base) if unpatched
                       else base.tree,
                       str(profile.fuzz_inputs),
                       str(profile.stress_cycles),
                       str(profile.stress_seconds),
                       # The guest gets its command as one string, where
                       # an empty argument would vanish.
                       ",".join(profile.stress_phases) or "default",
                       profile.bgreclaim_tests]
                      + programs,
                      timeout=profile.timeout,
                      echo=lambda line: report.line(line) or
                      vm.progress_line(line),
                      numa_nodes=profile.numa_nodes, cpus=profile.cpus,
                      one_thread=profile.one_thread,
                      trace_events=boot_trace_events(base, unpatched))
    problems = check_guest_log(rdir, console)
    plans, notes = {}, {}
    results = tap.parse(_read(os.path.join(rdir, "tap.txt")) or "", plans,
                        notes)
    # Built-in KUnit suites ran at boot and reported on the console.
    results.update(tap.parse_kunit(splat.kernel_messages(console), plans))
    if not results:
        problems.append("no test results were produced")
    return SuiteRun(results, plans, notes, problems, guest_kernel(console))


def run_repeat(base, variant, unpatched, programs, rounds):
    """Run the cgroup kselftest PROGRAMS in order, ROUNDS times in one
    boot.  Return ({test: {result: count}}, problems)."""
    kernel = build.kernel_image(base, variant, unpatched)
    rdir = rundir(f"repeat-{build.kernel_name(base, variant, unpatched)}")
    budget = rounds * len(programs) * TEST_TIMEOUT
    console = vm.boot(kernel, rdir,
                      [os.path.join(GUEST, "repeat.sh"), rdir,
                       build.kselftest_dir(base, variant, unpatched),
                       str(TEST_TIMEOUT),
                       str(rounds)] + list(programs),
                      timeout=min(budget, SUITE_TIMEOUT * 2),
                      trace_events=boot_trace_events(base, unpatched))
    problems = check_guest_log(rdir, console)
    tally = {}
    for n in range(1, rounds + 1):
        text = _read(os.path.join(rdir, f"round-{n}.tap"))
        if text is None:
            problems.append(f"round {n} left no results")
            continue
        for name, result in tap.parse(text).items():
            counts = tally.setdefault(name, {})
            counts[result] = counts.get(result, 0) + 1
    return tally, problems


# The profile each variant's baseline records: the lean kernel runs the
# whole suite, the debug kernel the subset `make check` runs on it.
BASELINE_PROFILE = {"lean": "full", "debug": "subset"}


def baseline_path(base, variant):
    """Each kernel variant is judged against its base built the same way:
    a debug kernel's timing and checks make tests fail that pass on lean,
    and each base has tests of its own and failures of its own."""
    suffix = "" if variant == "lean" else f"-{variant}"
    return os.path.join(base.baseline_dir, f"cgroup-selftests{suffix}.txt")


def load_baseline(base, variant, programs=()):
    """The baseline of the variant on BASE, or the part of it about
    PROGRAMS (all when empty, none when None)."""
    entries = _load_baseline(base, variant)
    if programs is None:
        return {}
    if not programs:
        return entries
    return {name: r for name, r in entries.items()
            if tap.plain_name(name.split(":")[0]) in programs}


def load_manifest(profile, unpatched=False):
    """{name: kind} of what a run of PROFILE must produce on
    a kernel with the series (baseline/expected.txt).  The series' tests
    are in no baseline, so without this list one that is not there (never
    built, a failed setup, a config without the KUnit suite) would go
    unnoticed.  The unpatched base produces none of it."""
    if unpatched:
        return {}
    text = _read(MANIFEST)
    if text is None:
        raise HarnessError(f"missing {MANIFEST}")
    return {name: kind for name, (profiles, kind)
            in baseline.parse_manifest(text, PROFILES).items()
            if profile in profiles}


def _load_baseline(base, variant):
    path = baseline_path(base, variant)
    text = _read(path)
    if text is None:
        raise HarnessError(f"missing {path}; run `make baseline "
                           f"BASE={base.name} VARIANT={variant}`")
    return baseline.parse(text)


def summary_line(results, cmp):
    """'N passed, N failed, N skipped' over the guest tests.  Failures the
    base kernel has too are counted as failed, never hidden; so is every
    test that fails the run without failing itself: one that went missing,
    skipped when it must run, or was cut short of its TAP plan."""
    judged = dict(results)
    judged.update(dict.fromkeys(cmp.failing(), "fail"))
    passed, failed, skipped = tap.counts(judged)
    return f"{passed} passed, {failed} failed, {skipped} skipped"


def compile_guest_programs():
    """The guest's C programs (guest/progs), built on the host into
    build/guest/bin, which the guest sees read-only."""
    out = os.path.join(BUILD, "guest", "bin")
    os.makedirs(out, exist_ok=True)
    src = os.path.join(GUEST, "progs")
    for name in sorted(os.listdir(src)):
        if name.endswith(".c"):
            run(["gcc", "-O2", "-Wall", "-Wextra", "-Werror", "-o",
                 os.path.join(out, name[:-2]), os.path.join(src, name)],
                quiet=True)
    return out


def run_demo(base, variant):
    kernel = build.kernel_image(base, variant)
    progs = compile_guest_programs()
    rdir = rundir(f"demo-{build.kernel_name(base, variant)}")
    console = vm.boot(kernel, rdir, [os.path.join(GUEST, "demo.sh"), rdir,
                                     progs], timeout=1800)
    return check_guest_log(rdir, console)
