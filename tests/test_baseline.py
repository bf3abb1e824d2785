import unittest

from harness import baseline

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

    def test_regression_fail_skip_and_missing(self):
        cmp = baseline.compare(self.base, {"test_a": "fail", "test_b": "fail",
                                           "test_c": "skip"})
        self.assertFalse(cmp.ok)
        self.assertEqual(cmp.regressions, [("test_a", "pass", "fail"),
                                           ("test_d", "pass", "missing")])
        cmp = baseline.compare(self.base, {"test_a": "skip", "test_b": "fail",
                                           "test_c": "skip",
                                           "test_d": "pass"})
        self.assertEqual(cmp.regressions, [("test_a", "pass", "skip")])

    def test_newly_passing_is_reported_not_failed(self):
        cmp = baseline.compare(self.base, {"test_a": "pass", "test_b": "pass",
                                           "test_c": "skip",
                                           "test_d": "pass"})
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


if __name__ == "__main__":
    unittest.main()


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
                         [("t_mem@auto:low", "pass", "missing")])


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
