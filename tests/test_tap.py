import os
import unittest

from harness import tap

DATA = os.path.join(os.path.dirname(__file__), "data")

SAMPLE = """\
TAP version 13
1..3
# timeout set to 600
# selftests: cgroup: test_memcontrol
# TAP version 13
# 1..4
# ok 1 test_memcg_subtree_control
# not ok 2 test_memcg_reclaim
# ok 3 # SKIP test_memcg_sock
# ok 4 test_memcg_oom_events
# # Totals: pass:2 fail:1 xfail:0 xpass:0 skip:1 error:0
not ok 1 selftests: cgroup: test_memcontrol # exit=1
# timeout set to 600
# selftests: cgroup: test_stress.sh
ok 2 selftests: cgroup: test_stress.sh # SKIP
# selftests: cgroup: test_cpuset_prs.sh
not ok 3 selftests: cgroup: test_cpuset_prs.sh # TIMEOUT 600 seconds
"""


class ParseTest(unittest.TestCase):
    def test_nested_and_top_level_results(self):
        results = tap.parse(SAMPLE)
        self.assertEqual(results, {
            "test_memcontrol:test_memcg_subtree_control": "pass",
            "test_memcontrol:test_memcg_reclaim": "fail",
            "test_memcontrol:test_memcg_sock": "skip",
            "test_memcontrol:test_memcg_oom_events": "pass",
            "test_memcontrol": "fail",
            "test_stress.sh": "skip",
            "test_cpuset_prs.sh": "fail",
        })

    def test_counts(self):
        self.assertEqual(tap.counts(tap.parse(SAMPLE)), (2, 3, 2))

    def test_truncated_program_keeps_no_stale_subtests(self):
        # A program that crashed prints no top-level line; its subtests
        # must not be attributed to the next program.
        text = ("# selftests: cgroup: a\n# ok 1 sub_a\n"
                "# selftests: cgroup: b\nok 1 selftests: cgroup: b\n")
        results = tap.parse(text)
        self.assertEqual(results["b"], "pass")
        self.assertEqual(results["a:sub_a"], "pass")
        self.assertNotIn("a", results)
        self.assertNotIn("b:sub_a", results)

    def test_empty_input(self):
        self.assertEqual(tap.parse(""), {})

    def test_plans(self):
        plans = {}
        tap.parse(SAMPLE + "# selftests: cgroup: cut\n# 1..3\n# ok 1 a\n",
                  plans)
        self.assertEqual(plans, {"test_memcontrol": (4, 4),
                                 "test_stress.sh": (None, 0),
                                 "test_cpuset_prs.sh": (None, 0),
                                 "cut": (3, 1)})

    def test_notes_are_what_a_result_followed(self):
        notes = {}
        tap.parse("# selftests: cgroup: t\n# 1..2\n# setup done\n"
                  "# ok 1 a\n# usage 9 > 8\n# not ok 2 b\n"
                  "not ok 1 selftests: cgroup: t # exit=1\n"
                  "# selftests: cgroup: stress-x\n# stress: 1 left\n"
                  "not ok 2 selftests: cgroup: stress-x # exit=1\n",
                  notes=notes)
        self.assertEqual(notes, {"t:a": ["setup done"],
                                 "t:b": ["usage 9 > 8"], "t": [],
                                 "stress-x": ["stress: 1 left"]})

    def test_a_forked_childs_copy_is_neither_a_result_nor_a_reset(self):
        # test_zswap forks with its stdout unflushed: each child prints the
        # parent's pending lines again, then what it says itself.
        plans, notes = {}, {}
        results = tap.parse(
            "# selftests: cgroup: z\n# 1..3\n"
            "# ok 1 a\n# child of b\n"
            "# ok 1 a\n# ok 2 b\n# reclaim failed\n"
            "# ok 1 a\n# ok 2 b\n# not ok 3 c\n"
            "not ok 1 selftests: cgroup: z # exit=1\n", plans, notes)
        self.assertEqual(results, {"z:a": "pass", "z:b": "pass",
                                   "z:c": "fail", "z": "fail"})
        self.assertEqual(notes["z:b"], ["child of b"])
        self.assertEqual(notes["z:c"], ["reclaim failed"])
        self.assertEqual(plans["z"], (3, 3))

    def test_a_program_that_runs_its_tests_twice(self):
        # test_stress.sh runs test_core's subtests plain, then under
        # stress: two TAP streams of one plan each.  A subtest counts once
        # against the plan, and a failure in either stream stands.
        for first, second in (("ok", "not ok"), ("not ok", "ok")):
            plans = {}
            results = tap.parse(
                "# selftests: cgroup: s\n# 1..2\n"
                f"# ok 1 a\n# {first} 2 b\n"
                f"# 1..2\n# ok 1 a\n# {second} 2 b\n"
                "not ok 1 selftests: cgroup: s # exit=1\n", plans)
            self.assertEqual(results["s:b"], "fail")
            self.assertEqual(results["s:a"], "pass")
            self.assertEqual(plans["s"], (2, 2))

    def test_a_parents_message_copied_by_a_child_is_said_once(self):
        notes = {}
        tap.parse("# selftests: cgroup: z\n"
                  "# ok 1 a\n# usage 9 > 8\n# not ok 2 b\n# child of c\n"
                  "# ok 1 a\n# usage 9 > 8\n# not ok 2 b\n# not ok 3 c\n"
                  "not ok 1 selftests: cgroup: z # exit=1\n", notes=notes)
        self.assertEqual(notes["z:b"], ["usage 9 > 8"])
        self.assertEqual(notes["z:c"], ["child of c"])

    def test_real_capture(self):
        path = os.path.join(DATA, "kselftest-cgroup.tap")
        with open(path, encoding="utf-8") as f:
            results = tap.parse(f.read())
        self.assertEqual(results["test_core"], "pass")
        self.assertEqual(results["test_memcontrol:test_memcg_min"], "pass")
        self.assertGreater(len(results), 80)


if __name__ == "__main__":
    unittest.main()


KUNIT_LOG = """\
KTAP version 1
1..2
    KTAP version 1
    # Subtest: memcg_bgreclaim
    # module: memcontrol_bgreclaim
    1..3
    ok 1 memcg_bgr_test_parse_valid
    # memcg_bgr_test_parse_invalid: EXPECTATION FAILED at mm/x.c:12
    not ok 2 memcg_bgr_test_parse_invalid
    ok 3 memcg_bgr_test_auto # SKIP no limit
# memcg_bgreclaim: pass:1 fail:1 skip:1 total:3
not ok 1 memcg_bgreclaim
    KTAP version 1
    # Subtest: other
    1..1
    ok 1 case_a
ok 2 other
"""


class ParseKunitTest(unittest.TestCase):
    def test_suites_and_cases(self):
        results = tap.parse_kunit(KUNIT_LOG.splitlines())
        self.assertEqual(results, {
            "kunit:memcg_bgreclaim:memcg_bgr_test_parse_valid": "pass",
            "kunit:memcg_bgreclaim:memcg_bgr_test_parse_invalid": "fail",
            "kunit:memcg_bgreclaim:memcg_bgr_test_auto": "skip",
            "kunit:memcg_bgreclaim": "fail",
            "kunit:other:case_a": "pass",
            "kunit:other": "pass",
        })

    def test_plans(self):
        plans = {}
        tap.parse_kunit(KUNIT_LOG.splitlines(), plans)
        self.assertEqual(plans, {"kunit:memcg_bgreclaim": (3, 3),
                                 "kunit:other": (1, 1)})

    def test_no_kunit(self):
        self.assertEqual(tap.parse_kunit(["booting", "ok 1 not kunit"]), {})


class LiveReportTest(unittest.TestCase):
    EXPECTED = {"test_kmem": ("fail", "base"),
                "test_kmem:test_kmem_basic": ("fail", "base"),
                "test_memcontrol:test_memcg_low": ("pass", ""),
                "test_memcontrol": ("flaky", "")}

    def report(self, lines):
        ticks = iter(range(0, 1000, 10))
        live = tap.LiveReport(self.EXPECTED, clock=lambda: next(ticks))
        return [s for s in map(live.line, lines) if s is not None]

    def test_known_failures_are_marked(self):
        self.assertEqual(self.report([
            "# selftests: cgroup: test_kmem",
            "# ok 1 test_kmem_memcg_deletion",
            "# not ok 2 test_kmem_basic",
            "not ok 1 selftests: cgroup: test_kmem # exit=1",
        ]), ["running test_kmem",
             "  test_kmem:test_kmem_basic: fail, as on the base (fail there)",
             "test_kmem: fail, as on the base (fail there) [10s]"])

    def test_regressions_stand_out(self):
        self.assertEqual(self.report([
            "# selftests: cgroup: test_memcontrol",
            "# not ok 4 test_memcg_low",
            "# not ok 5 test_memcg_brand_new",
            "not ok 2 selftests: cgroup: test_memcontrol # exit=1",
            "# selftests: cgroup: test_new",
            "ok 3 selftests: cgroup: test_new # SKIP no swap",
        ]), ["running test_memcontrol",
             "  test_memcontrol:test_memcg_low: FAILED (pass on the base)",
             "  test_memcontrol:test_memcg_brand_new: FAILED (new test)",
             "test_memcontrol: fail, as on the base (flaky there) [10s]",
             "running test_new",
             "test_new: skip [10s]"])

    def test_other_output_is_not_reported(self):
        self.assertEqual(self.report(["guest: 2 CPUs", "[ 1.0] ok 1 x",
                                      "# # giveups 5"]), [])


class PlainNameTest(unittest.TestCase):
    def test_variant_is_dropped(self):
        self.assertEqual(tap.plain_name("t_mem@auto:low"), "t_mem:low")
        self.assertEqual(tap.plain_name("t_mem@auto"), "t_mem")
        self.assertEqual(tap.plain_name("kunit:s:c"), "kunit:s:c")
