import os
import re
import unittest

from harness import baseline, bases, guest_run, tap
from harness.common import GUEST

DATA = os.path.join(os.path.dirname(__file__), "data")

BASE = """\
# comment
test_a pass
test_b fail fails on the base: needs more memory
test_c skip no hugetlb
test_d pass
test_e flaky timing under emulation
"""


class ParseTest(unittest.TestCase):
    def test_parse(self):
        b = baseline.parse(BASE)
        self.assertEqual(b["test_b"], ("fail", "fails on the base: needs "
                                               "more memory"))
        self.assertEqual(b["test_a"], ("pass", ""))

    def test_rejects_bad_result(self):
        with self.assertRaises(ValueError):
            baseline.parse("test_a passed\n")

    def test_rejects_duplicate(self):
        with self.assertRaises(ValueError):
            baseline.parse("test_a pass\ntest_a fail\n")

    def test_render_round_trip_keeps_reasons(self):
        text = baseline.render({"x": "fail", "longer_name": "pass"},
                               {"x": "why"}, ["header"])
        self.assertEqual(baseline.parse(text),
                         {"x": ("fail", "why"), "longer_name": ("pass", "")})


class CompareTest(unittest.TestCase):
    def setUp(self):
        self.base = baseline.parse(BASE)

    def test_identical_run_is_ok(self):
        cmp = baseline.compare(self.base, {"test_a": "pass", "test_b": "fail",
                                           "test_c": "skip",
                                           "test_d": "pass",
                                           "test_e": "pass"})
        self.assertTrue(cmp.ok)
        self.assertEqual(cmp.known_failures, ["test_b"])

    def test_flaky_may_fail_but_not_vanish_silently(self):
        cmp = baseline.compare(self.base, {"test_a": "pass", "test_b": "fail",
                                           "test_c": "skip", "test_d": "pass",
                                           "test_e": "fail"})
        self.assertTrue(cmp.ok)
        self.assertIn("flaky on the base, fail this time: test_e",
                      baseline.report(cmp))

    def test_failure_quotes_its_last_lines(self):
        said = [f"line {i}" for i in range(12)]
        cmp = baseline.compare(self.base, {"test_a": "fail", "test_b": "fail",
                                           "test_c": "skip", "test_d": "pass",
                                           "test_e": "pass", "new": "fail"})
        lines = baseline.report(cmp, {"test_a": said, "new": ["why"],
                                      "test_b": ["known"]}).splitlines()
        at = lines.index("FAILED (not in the baseline, so it must pass): "
                         "new: fail")
        self.assertEqual(lines[at + 1], "    | why")
        at = lines.index("REGRESSION: test_a: pass on the base, fail now")
        self.assertEqual(lines[at + 1:at + 1 + baseline.WHY_LINES],
                         [f"    | {s}" for s in said[-baseline.WHY_LINES:]])
        self.assertNotIn("    | known", lines)

    def test_regression_fail_skip_and_missing(self):
        cmp = baseline.compare(self.base, {"test_a": "fail", "test_b": "fail",
                                           "test_c": "skip",
                                           "test_e": "pass"})
        self.assertFalse(cmp.ok)
        self.assertEqual(cmp.regressions, [("test_a", "pass", "fail"),
                                           ("test_d", "pass", "missing")])
        cmp = baseline.compare(self.base, {"test_a": "skip", "test_b": "fail",
                                           "test_c": "skip",
                                           "test_d": "pass",
                                           "test_e": "pass"})
        self.assertEqual(cmp.regressions, [("test_a", "pass", "skip")])

    def test_newly_passing_is_reported_not_failed(self):
        cmp = baseline.compare(self.base, {"test_a": "pass", "test_b": "pass",
                                           "test_c": "skip",
                                           "test_d": "pass",
                                           "test_e": "fail"})
        self.assertTrue(cmp.ok)
        self.assertEqual(cmp.newly_passing, ["test_b"])
        self.assertIn("newly passing: test_b", baseline.report(cmp))

    def test_new_test_failing_fails(self):
        cmp = baseline.compare(self.base, {"test_a": "pass", "test_b": "fail",
                                           "test_c": "skip", "test_d": "pass",
                                           "test_new": "fail"})
        self.assertFalse(cmp.ok)
        self.assertEqual(cmp.new_failures, [("test_new", "fail")])

    def test_new_test_skipping_fails(self):
        cmp = baseline.compare(self.base, {"test_a": "pass", "test_b": "fail",
                                           "test_c": "skip", "test_d": "pass",
                                           "test_new": "skip"})
        self.assertFalse(cmp.ok)
        self.assertIn("test_new: skip", baseline.report(cmp))

    def test_may_skip(self):
        # A manifest entry marked may-skip may skip, and its skip is
        # reported with what it said; failing or missing still fail.
        manifest = {"phase": "may-skip"}
        results = {"test_a": "pass", "test_b": "fail", "test_c": "skip",
                   "test_d": "pass", "test_e": "pass"}
        notes = {"phase": ["nothing reached its target"]}
        cmp = baseline.compare(self.base, dict(results, phase="skip"),
                               manifest)
        self.assertTrue(cmp.ok, baseline.report(cmp))
        report = baseline.report(cmp, notes)
        self.assertIn("skipped, as it may be: phase", report)
        self.assertIn("| nothing reached its target", report)
        for now in ("fail", "missing"):
            with self.subTest(now=now):
                run = dict(results, phase=now) if now != "missing" \
                    else results
                self.assertFalse(
                    baseline.compare(self.base, run, manifest).ok)
        cmp = baseline.compare(self.base, dict(results, phase="skip"),
                               {"phase": ""})
        self.assertFalse(cmp.ok)


class VariantTest(unittest.TestCase):
    base = baseline.parse("t_mem pass\nt_mem:low pass\nt_mem:reclaim fail\n"
                          "t_core pass\n")

    def test_variant_judged_like_its_program(self):
        cmp = baseline.compare(self.base, {
            "t_mem": "pass", "t_mem:low": "pass", "t_mem:reclaim": "fail",
            "t_core": "pass", "t_mem@auto": "pass",
            "t_mem@auto:low": "fail", "t_mem@auto:reclaim": "fail"})
        self.assertEqual(cmp.regressions, [("t_mem@auto:low", "pass", "fail")])
        self.assertEqual(cmp.known_failures,
                         ["t_mem:reclaim", "t_mem@auto:reclaim"])
        self.assertEqual(cmp.new_tests, [])
        self.assertIn("REGRESSION: t_mem@auto:low", baseline.report(cmp))

    def test_missing_variant_subtest_is_a_regression(self):
        cmp = baseline.compare(self.base, {
            "t_mem": "pass", "t_mem:low": "pass", "t_mem:reclaim": "fail",
            "t_core": "pass", "t_mem@auto": "pass"})
        self.assertEqual(cmp.regressions,
                         [("t_mem@auto:low", "pass", "missing"),
                          ("t_mem@auto:reclaim", "fail", "missing")])


class ReportTest(unittest.TestCase):
    def test_failures_come_last(self):
        base = baseline.parse("t_a pass\nt_b fail known\n")
        cmp = baseline.compare(base, {"t_a": "fail", "t_b": "fail",
                                      "t_new": "pass", "t_bad": "fail"})
        lines = baseline.report(cmp).splitlines()
        self.assertTrue(lines[0].startswith("new test"))
        self.assertEqual(lines[-2:], [
            "FAILED (not in the baseline, so it must pass): t_bad: fail",
            "REGRESSION: t_a: pass on the base, fail now"])


class VariantEntryTest(unittest.TestCase):
    base = baseline.parse("t_mem pass\nt_mem:sock pass\n"
                          "t_mem@auto:sock flaky seen failing once\n")

    def test_own_entry_overrides_the_program(self):
        cmp = baseline.compare(self.base, {
            "t_mem": "pass", "t_mem:sock": "pass", "t_mem@auto": "pass",
            "t_mem@auto:sock": "fail"})
        self.assertEqual(cmp.regressions, [])
        self.assertEqual(cmp.flaky_failures, [("t_mem@auto:sock", "fail")])

    def test_own_entry_ignored_when_the_variant_did_not_run(self):
        cmp = baseline.compare(self.base, {"t_mem": "pass",
                                           "t_mem:sock": "pass"})
        self.assertEqual(cmp.regressions, [])
        self.assertEqual(cmp.flaky_failures, [])


class TransitionTest(unittest.TestCase):
    """Every baseline result against every result of a run."""
    # was -> {now: where compare() puts it}
    TABLE = {
        "pass": {"pass": None, "fail": "regressions", "skip": "regressions",
                 "missing": "regressions"},
        "fail": {"pass": "newly_passing", "fail": "known_failures",
                 "skip": "regressions", "missing": "regressions"},
        "skip": {"pass": "newly_passing", "fail": "regressions",
                 "skip": None, "missing": "regressions"},
        "flaky": {"pass": None, "fail": "flaky_failures",
                  "skip": "regressions", "missing": "regressions"},
    }

    def test_every_transition(self):
        for was, nows in self.TABLE.items():
            for now, where in nows.items():
                with self.subTest(was=was, now=now):
                    results = {} if now == "missing" else {"t": now}
                    cmp = baseline.compare({"t": (was, "why")}, results)
                    found = [f for f in ("regressions", "known_failures",
                                         "flaky_failures", "newly_passing")
                             if getattr(cmp, f)]
                    self.assertEqual(found, [where] if where else [])
                    self.assertEqual(cmp.ok, where != "regressions")

    def test_skip_to_fail_and_missing_are_reported(self):
        base = baseline.parse("t_a skip no hugetlb\nt_b skip 8 CPUs\n"
                              "t_c fail known\n")
        cmp = baseline.compare(base, {"t_a": "fail", "t_c": "skip"})
        self.assertEqual(baseline.report(cmp).splitlines(), [
            "REGRESSION: t_a: skip on the base, fail now",
            "REGRESSION: t_b: skip on the base, missing now",
            "REGRESSION: t_c: fail on the base, skip now"])


# The tests of the series as the guest scripts print them, around the
# capture of a base run: the kselftest with its plan (run_kselftest.sh),
# its MGLRU+zswap pass (tap_program), the other programs of the full
# profile; the @auto pass is made from the capture, as run-selftests.sh
# makes it.
BGR_CASES = ["test_bgr_grammar", "test_bgr_effective", "test_bgr_inherit",
             "test_bgr_pagecache", "test_bgr_anon_swap", "test_bgr_ancestor",
             "test_bgr_backoff", "test_bgr_rmdir_pending",
             "test_bgr_high_backstop", "test_bgr_cpu_max",
             "test_bgr_delegation"]


# On a guest of one node, which the manifest allows.
BGR_SKIPPED = "test_bgr_cpuset_nodes # SKIP needs two memory nodes"


def _bgreclaim(name, number):
    cases = BGR_CASES + [BGR_SKIPPED]
    return "\n".join(
        [f"# selftests: cgroup: {name}", "# TAP version 13",
         f"# 1..{len(cases)}"] +
        [f"# ok {i} {case}" for i, case in enumerate(cases, 1)] +
        [f"ok {number} selftests: cgroup: {name}"]) + "\n"


def _auto_pass(capture, programs):
    """The @auto pass: the PROGRAMS' runs again, renamed by the sed of
    run-selftests.sh."""
    lines = ["TAP version 13", f"1..{len(programs)}"]
    for program in programs:
        start = capture.index(f"# selftests: cgroup: {program}\n")
        end = re.compile(rf"^(not )?ok \d+ selftests: cgroup: {program}\b.*$",
                         re.M).search(capture, start).end()
        lines += [re.sub(r"^(.*selftests: cgroup: \S*)", r"\1@auto", line)
                  for line in capture[start:end].splitlines()]
    return "\n".join(lines) + "\n"


def _simple(names):
    return "".join(f"# selftests: cgroup: {name}\n# output\n"
                   f"ok {i} selftests: cgroup: {name}\n"
                   for i, name in enumerate(names, 1))


with open(os.path.join(DATA, "kselftest-cgroup.tap"), encoding="utf-8") as f:
    CAPTURE = f.read()
BGRECLAIM = _bgreclaim("test_bgreclaim", 14)
SERIES_TAP = (
    CAPTURE + BGRECLAIM + _bgreclaim("test_bgreclaim-mglru-zswap", 1) +
    _auto_pass(CAPTURE, ["test_kmem", "test_memcontrol"]) +
    _simple(["fuzz-wmarks", "memcg-bgreclaim-top"]) +
    _simple(f"runtime-{rt}-{how}" for rt in ("crun", "runc")
            for how in ("auto", "explicit", "invalid")))
KUNIT = """\
KTAP version 1
1..3
    KTAP version 1
    # Subtest: memcg_bgreclaim
    # module: memcontrol_bgreclaim
    1..3
    ok 1 memcg_bgr_test_parse_valid
    ok 2 memcg_bgr_test_parse_invalid
    ok 3 memcg_bgr_test_auto
# memcg_bgreclaim: pass:3 fail:0 skip:0 total:3
ok 1 memcg_bgreclaim
    KTAP version 1
    # Subtest: sched_cgroup_ctx
    1..1
    ok 1 sched_cgroup_test_enter_leave
# sched_cgroup_ctx: pass:1 fail:0 skip:0 total:1
ok 2 sched_cgroup_ctx
    KTAP version 1
    # Subtest: kswapd_helpers
    1..2
    ok 1 kswapd_helpers_test_alone
    ok 2 kswapd_helpers_test_shared_target
# kswapd_helpers: pass:2 fail:0 skip:0 total:2
ok 3 kswapd_helpers
"""
# The base as the capture ran it.
CAPTURE_BASE = {name: (result, "") for name, result
                in tap.parse(CAPTURE).items()}


class ManifestTest(unittest.TestCase):
    """The committed manifest against runs of the full profile made from
    the capture (guest_run.run_selftests() parses a run the same way)."""

    def judge(self, text, kunit=KUNIT, unpatched=False):
        plans = {}
        results = tap.parse(text, plans)
        results.update(tap.parse_kunit(kunit.splitlines(), plans))
        cmp = baseline.compare(CAPTURE_BASE, results,
                               guest_run.load_manifest("full", unpatched),
                               plans)
        return results, cmp

    def failures(self, cmp):
        """The report's lines that fail the run: FAILED, REGRESSION,
        MISSING, SKIPPED, TRUNCATED."""
        return [line for line in baseline.report(cmp).splitlines()
                if line.split(" ")[0].isupper()]

    def test_complete_run_is_ok(self):
        results, cmp = self.judge(SERIES_TAP)
        self.assertTrue(cmp.ok, baseline.report(cmp))
        self.assertEqual(guest_run.summary_line(results, cmp),
                         "134 passed, 16 failed, 6 skipped")

    def test_missing_program(self):
        results, cmp = self.judge(SERIES_TAP.replace(BGRECLAIM, ""))
        self.assertFalse(cmp.ok)
        self.assertEqual(self.failures(cmp), [
            "MISSING (the series must produce it): test_bgreclaim",
            "MISSING (the series must produce it): "
            "test_bgreclaim:test_bgr_cpuset_nodes"])
        self.assertEqual(guest_run.summary_line(results, cmp),
                         "122 passed, 18 failed, 5 skipped")

    def test_truncated_plan(self):
        cut = BGRECLAIM.replace("# ok 11 test_bgr_delegation\n", "")
        _, cmp = self.judge(SERIES_TAP.replace(BGRECLAIM, cut))
        self.assertEqual(self.failures(cmp), [
            "TRUNCATED: test_bgreclaim: 11 results, its TAP plan says 1..12"])

    def test_guest_died_in_a_program(self):
        text = SERIES_TAP[:SERIES_TAP.index("# ok 4 test_bgr_pagecache")]
        results, cmp = self.judge(text)
        failures = self.failures(cmp)
        self.assertIn("MISSING (the series must produce it): test_bgreclaim",
                      failures)
        self.assertIn("MISSING (the series must produce it): fuzz-wmarks",
                      failures)
        self.assertEqual(failures[-1], "TRUNCATED: test_bgreclaim: "
                         "3 results, its TAP plan says 1..12")
        # Missing and cut short, it is counted once.
        self.assertEqual(guest_run.summary_line(results, cmp),
                         "89 passed, 24 failed, 4 skipped")

    def test_no_plan(self):
        _, cmp = self.judge(SERIES_TAP.replace("# 1..12\n", "", 1))
        self.assertEqual(self.failures(cmp), [
            "TRUNCATED: test_bgreclaim: no TAP plan (1..N)"])

    def test_plan_of_a_base_program(self):
        text = SERIES_TAP.replace("# ok 2 test_pids_events\n", "")
        _, cmp = self.judge(text)
        self.assertEqual(self.failures(cmp), [
            "REGRESSION: test_pids:test_pids_events: pass on the base, "
            "missing now",
            "TRUNCATED: test_pids: 1 results, its TAP plan says 1..2"])

    def test_skipped_series_test(self):
        skipped = ("# selftests: cgroup: test_bgreclaim\n"
                   "# 1..0 # SKIP no memory.reclaim_wmarks\n"
                   "ok 14 selftests: cgroup: test_bgreclaim # SKIP\n")
        results, cmp = self.judge(SERIES_TAP.replace(BGRECLAIM, skipped))
        self.assertEqual(self.failures(cmp), [
            "SKIPPED (the series must run it): test_bgreclaim",
            "MISSING (the series must produce it): "
            "test_bgreclaim:test_bgr_cpuset_nodes"])
        self.assertEqual(guest_run.summary_line(results, cmp),
                         "122 passed, 18 failed, 5 skipped")

    def test_kunit_suite_absent(self):
        _, cmp = self.judge(SERIES_TAP, kunit="")
        self.assertEqual(self.failures(cmp), [
            "MISSING (the series must produce it): kunit:memcg_bgreclaim",
            "MISSING (the series must produce it): kunit:kswapd_helpers",
            "MISSING (the series must produce it): kunit:sched_cgroup_ctx"])

    def test_kunit_suite_cut_short(self):
        _, cmp = self.judge(SERIES_TAP, KUNIT.replace("    ok 3", "    x"))
        self.assertEqual(self.failures(cmp), [
            "TRUNCATED: kunit:memcg_bgreclaim: 2 results, its TAP plan says "
            "1..3"])

    def test_auto_pass_absent(self):
        auto = _auto_pass(CAPTURE, ["test_kmem", "test_memcontrol"])
        _, cmp = self.judge(SERIES_TAP.replace(auto, ""))
        self.assertEqual(self.failures(cmp), [
            "MISSING (the series must produce it): test_memcontrol@auto",
            "MISSING (the series must produce it): test_kmem@auto"])

    def test_base_owes_nothing(self):
        _, cmp = self.judge(CAPTURE, kunit="", unpatched=True)
        self.assertTrue(cmp.ok, baseline.report(cmp))

    def test_profiles(self):
        subset = guest_run.load_manifest("subset")
        self.assertIn("stress-churn", subset)
        self.assertNotIn("runtime-crun-auto", subset)
        self.assertNotIn("test_kmem@auto", subset)
        self.assertNotIn("stress-churn", guest_run.load_manifest("full"))
        self.assertNotIn("test_memcontrol@auto",
                         guest_run.load_manifest("stress"))
        self.assertTrue(subset["test_bgreclaim"])
        self.assertTrue(subset["kunit:memcg_bgreclaim"])
        self.assertFalse(subset["fuzz-wmarks"])

    def test_helpers_profile_runs_no_program(self):
        # Its guest runs the stress phases alone: the programs' baseline
        # entries must not be owed there, the named phases must.
        self.assertIsNone(guest_run.PROFILES["helpers"].programs)
        base = bases.get("6.12")
        self.assertEqual(guest_run.load_baseline(base, "lean", None), {})
        self.assertTrue(guest_run.load_baseline(base, "lean", ["test_core"]))
        helpers = guest_run.load_manifest("helpers")
        self.assertIn("stress-kswapd", helpers)
        self.assertNotIn("stress-kswapd-target", helpers)
        self.assertIn("stress-kswapd-target",
                      guest_run.load_manifest("kswapd-target"))
        self.assertIn("stress-helpers-off", helpers)
        self.assertNotIn("test_bgreclaim", helpers)

    def test_stress_phases_match_the_script(self):
        with open(os.path.join(GUEST, "stress.sh"), encoding="utf-8") as f:
            phases = re.search(r"PHASES=\$\{\*:-(.*)\}", f.read()).group(1)
        self.assertEqual(
            sorted(n for n in guest_run.load_manifest("stress")
                   if n.startswith("stress-")),
            sorted(f"stress-{p}" for p in phases.split()))


class BackportProfileTest(unittest.TestCase):
    def test_what_it_owes(self):
        # What run-selftests.sh produces with test_bgreclaim and
        # test_memcontrol named, no stress, and the KUnit suites at boot.
        self.assertEqual(sorted(guest_run.load_manifest("backport")), [
            "fuzz-wmarks", "kunit:kswapd_helpers", "kunit:memcg_bgreclaim",
            "kunit:sched_cgroup_ctx", "test_bgreclaim",
            "test_bgreclaim-mglru-zswap", "test_memcontrol@auto"])
        self.assertEqual(guest_run.PROFILES["backport"].programs,
                         ["test_bgreclaim", "test_memcontrol"])
        self.assertEqual(guest_run.PROFILES["backport"].stress_cycles, 0)


class GuestKernelTest(unittest.TestCase):
    def test_release_from_the_console(self):
        with open(os.path.join(DATA, "console-clean.log"),
                  encoding="utf-8") as f:
            self.assertEqual(guest_run.guest_kernel(f.read()), "6.12.117+")

    def test_none_when_the_guest_never_said(self):
        self.assertIsNone(guest_run.guest_kernel("[ 0.0] Linux version x\n"
                                                 "guest:\n"))


class ParseManifestTest(unittest.TestCase):
    PROFILES = ("full", "subset")

    def test_parse(self):
        self.assertEqual(baseline.parse_manifest(
            "# comment\nt_a full,subset plan\nt_b subset\nt_c full may-skip\n",
            self.PROFILES),
            {"t_a": (("full", "subset"), "plan"), "t_b": (("subset",), ""),
             "t_c": (("full",), "may-skip")})

    def test_rejects_bad_lines(self):
        for text in ("t_a\n", "t_a ful\n", "t_a full planned\n",
                     "t_a full plan x\n", "t_a full plan may-skip\n",
                     "t_a full\nt_a subset\n"):
            with self.subTest(text=text), self.assertRaises(ValueError):
                baseline.parse_manifest(text, self.PROFILES)


if __name__ == "__main__":
    unittest.main()
