import os
import tempfile
import unittest

from harness import bench, scenario
from harness.common import GUEST

BENCH = os.path.join(GUEST, "bench")

OVERHEAD_LIKE = """\
[[scenario]]
name = "pair"
title = "Pairs of boots"
variants = ["off", "auto"]
base_variants = ["base"]
boots = 2
rounds = 3
icount = true
what = "w"
metrics = [["x", "x", "s"]]

[[scenario.target]]
text = "auto within 1% of base"
metric = "x"
variant = "auto"
reference = "base"
factor = 1.01

[[scenario.target]]
text = "auto at least 0"
metric = "x"
variant = "auto"
limit = 0
at_most = false
"""


class LoadTest(unittest.TestCase):
    def load(self, text, name="s.toml"):
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, name), "w", encoding="utf-8") as f:
                f.write(text)
            return scenario.load_all(tmp)

    def test_base_boots_come_before_each_patched_boot(self):
        s = self.load(OVERHEAD_LIKE)["pair"]
        self.assertEqual(s.boots, [(True, ["base"]), (False, ["off", "auto"]),
                                   (True, ["base"]), (False, ["off", "auto"])])
        self.assertEqual((s.script, s.rounds, s.cpus, s.icount),
                         ("s", 3, 2, True))
        ratio, bound = s.targets
        self.assertIsInstance(ratio, scenario.Target)
        self.assertEqual((ratio.reference, ratio.factor), ("base", 1.01))
        self.assertIsInstance(bound, scenario.Bound)
        self.assertEqual((bound.limit, bound.at_most), (0, False))

    def test_an_unknown_key_is_refused(self):
        with self.assertRaisesRegex(ValueError, "unknown keys round"):
            self.load(OVERHEAD_LIKE.replace("rounds = 3", "round = 3"))

    def test_a_scenario_names_a_kernel_config_of_configs(self):
        s = self.load(OVERHEAD_LIKE.replace("rounds = 3",
                                            'rounds = 3\nconfig = "debug"'))
        self.assertEqual(s["pair"].config, "debug")
        self.assertIsNone(self.load(OVERHEAD_LIKE)["pair"].config)
        with self.assertRaisesRegex(ValueError, "config 'fast' is no"):
            self.load(OVERHEAD_LIKE.replace("rounds = 3",
                                            'rounds = 3\nconfig = "fast"'))

    def test_a_name_declared_twice_is_refused(self):
        with self.assertRaisesRegex(ValueError, "declared twice"):
            self.load(OVERHEAD_LIKE + OVERHEAD_LIKE.split("\n\n")[0] + "\n")


class DeclaredTest(unittest.TestCase):
    """What guest/bench/*.toml declare is runnable and judgeable."""

    SCENARIOS = scenario.load_all(BENCH)

    def test_every_scenario_has_its_guest_script(self):
        for s in self.SCENARIOS.values():
            path = os.path.join(BENCH, f"{s.script}.sh")
            self.assertTrue(os.path.exists(path), f"{s.name}: no {path}")

    def test_targets_name_declared_variants_and_metrics(self):
        for s in self.SCENARIOS.values():
            variants = {v for _, vs in s.boots for v in vs}
            metrics = {m[0] for m in s.metrics} | {f.key for f in s.fits}
            for t in s.targets:
                names = [t.variant] + ([t.reference]
                                       if isinstance(t, scenario.Target)
                                       else [])
                for v in names:
                    self.assertIn(v, variants, f"{s.name}: {t.text}")
                self.assertIn(t.metric, metrics, f"{s.name}: {t.text}")

    def test_pressure_exempts_declared_variants(self):
        for s in self.SCENARIOS.values():
            if s.pressure:
                variants = {v for _, vs in s.boots for v in vs}
                self.assertLessEqual(set(s.pressure.exempt), variants)


class TargetVerdictTest(unittest.TestCase):
    @staticmethod
    def rounds(off, auto):
        """Trials of metric x in three rounds of one boot, each round at
        its own speed, off and auto at `off` and `auto` times it."""
        trials = []
        for rnd, speed in enumerate([1, 3, 2], start=1):
            trials += [{"variant": "off", "boot": 1, "round": rnd,
                        "x": off * speed},
                       {"variant": "auto", "boot": 1, "round": rnd,
                        "x": auto * speed}]
        return trials

    def test_verdict_keeps_the_rounds_paired(self):
        # auto is 0.8x of off in every round, however fast the round ran:
        # met, where resampling each variant alone, the old rule, cannot
        # tell.
        trials = self.rounds(10, 8)
        stats = bench.summarize(trials)
        word, text = scenario.Target("t", "x", "auto", "off", 0.9).check(
            stats, trials)
        self.assertEqual(word, "met")
        self.assertIn("ratio 0.800x, 95% CI 0.800-0.800 over 1 boot, "
                      "3 rounds", text)
        self.assertIn("the old rule: CI 0.267-", text)
        self.assertTrue(text.endswith("inconclusive"))

    def test_a_changed_target_keeps_the_old_one_beside(self):
        # auto is 1.02x of off in every round: within a 5% margin, but
        # not at most off's, the target it had before.
        trials = self.rounds(100, 102)
        target = scenario.Target("t", "x", "auto", "off", 1.05,
                                 was=(1.0, "a superiority test"))
        word, text = target.check(bench.summarize(trials), trials)
        self.assertEqual(word, "met")
        self.assertTrue(text.endswith(
            "; the target was 1.0x (a superiority test), which reads "
            "MISSED"))


if __name__ == "__main__":
    unittest.main()
