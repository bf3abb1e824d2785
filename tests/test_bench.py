import contextlib
import gzip
import io
import json
import os
import shutil
import tempfile
import unittest
from unittest import mock

from harness import bench, scenario
from harness import trials as trial_data
from harness.common import HarnessError

TRACE = """\
# tracer: nop
   kworker/u8:2-40  [001] .....  10.000000: mm_vmscan_memcg_bgreclaim_queue: cgroup_id=7 usage=3000 delay_ms=0
   kworker/u8:2-40  [001] .....  10.100000: mm_vmscan_memcg_bgreclaim_queue: cgroup_id=8 usage=3100 delay_ms=0
   kworker/u8:2-40  [000] .....  10.200000: mm_vmscan_memcg_bgreclaim_begin: cgroup_id=7 usage=3000 high_wmark=2048 low_wmark=1638
   kworker/u8:2-40  [000] .....  10.300000: mm_vmscan_memcg_bgreclaim_end: cgroup_id=7 nr_reclaimed=1362 usage=1638 cpu_ns=1 duration_ns=100000000 stop=done
   kworker/u8:3-41  [001] .....  10.250000: mm_vmscan_memcg_bgreclaim_begin: cgroup_id=8 usage=3100 high_wmark=2048 low_wmark=1638
   kworker/u8:3-41  [001] .....  10.400000: mm_vmscan_memcg_bgreclaim_end: cgroup_id=8 nr_reclaimed=1462 usage=1638 cpu_ns=1 duration_ns=150000000 stop=done
"""


class StatsTest(unittest.TestCase):
    def test_percentile_nearest_rank(self):
        values = list(range(1, 101))
        self.assertEqual(trial_data.percentile(values, 50), 50)
        self.assertEqual(trial_data.percentile(values, 99), 99)
        self.assertEqual(trial_data.percentile([5], 99), 5)
        self.assertEqual(trial_data.percentile([3, 1, 2], 100), 3)

    def test_percentile_of_a_fraction(self):
        values = list(range(1, 2001))
        self.assertEqual(trial_data.percentile(values, 99.9), 1998)

    def test_jain_index(self):
        self.assertAlmostEqual(trial_data.jain_index([1, 1, 1, 1]), 1.0)
        self.assertAlmostEqual(trial_data.jain_index([1, 0, 0, 0]), 0.25)
        self.assertEqual(trial_data.jain_index([0, 0]), 0.0)

    def test_summarize_median_and_spread(self):
        trials = [{"variant": "off", "round": r, "x": x, "name": "s"}
                  for r, x in ((1, 3), (2, 1), (3, 2))]
        stats = bench.summarize(trials)
        self.assertEqual(stats["off"]["x"], (2, 1, 3, 3, [3, 1, 2]))
        self.assertNotIn("round", stats["off"])
        self.assertNotIn("name", stats["off"])


class FitTest(unittest.TestCase):
    FIT = scenario.Fit("y_at_x", "y", "x", "ref")

    def test_compares_at_equal_covariate(self):
        # The reference lies on y = 100 - x; "new" does 10% less at x = 10
        # and as much at x = 50, though its y is lower than every
        # reference trial's.
        trials = [{"variant": "ref", "x": x, "y": 100 - x}
                  for x in (0, 20, 40)]
        trials += [{"variant": "new", "x": 10, "y": 81},
                   {"variant": "new", "x": 50, "y": 50}]
        got = [t["y_at_x"] for t in self.FIT.apply(trials)]
        for value, want in zip(got, [1, 1, 1, 0.9, 1]):
            self.assertAlmostEqual(value, want)

    def test_no_line_through_one_point(self):
        trials = [{"variant": "ref", "x": 1, "y": 2},
                  {"variant": "new", "x": 3, "y": 4}]
        self.assertEqual(self.FIT.apply(trials), trials)

    def test_trials_without_the_metrics_are_left_out(self):
        trials = [{"variant": "ref", "x": x, "y": 100 - x}
                  for x in (0, 20)]
        trials += [{"variant": "ref", "x": 5}, {"variant": "new"}]
        got = self.FIT.apply(trials)
        self.assertAlmostEqual(got[1]["y_at_x"], 1)
        self.assertEqual(got[2:], trials[2:])

    def test_no_ratio_where_the_line_predicts_nothing(self):
        trials = [{"variant": "ref", "x": x, "y": 100 - x}
                  for x in (0, 20)]
        trials.append({"variant": "new", "x": 150, "y": 5})
        self.assertNotIn("y_at_x", self.FIT.apply(trials)[2])


class TraceTest(unittest.TestCase):
    # Usage at the end of the trial, in pages: 9 was never reclaimed.
    FINAL = {"7": 1638, "8": 1638, "9": 3000}

    def test_pool_figures(self):
        events = trial_data.parse_trace(TRACE)
        self.assertEqual(len(events), 6)
        figs = trial_data.pool_figures(events, self.FINAL, 1638)
        # Two runs overlap between 10.25 and 10.30.
        self.assertEqual(figs["max_concurrent_runs"], 2)
        self.assertAlmostEqual(figs["wait_p99_ms"], 200.0, places=3)
        # Runs of 100 and 150 ms: the p99 wait is two runs of the p50's.
        self.assertAlmostEqual(figs["run_p50_ms"], 100.0, places=3)
        self.assertAlmostEqual(figs["wait_p99_runs"], 2.0, places=3)
        self.assertEqual(figs["cgroups_served"], 2)
        self.assertAlmostEqual(figs["serve_s"], 0.4, places=6)
        # Cgroup 9 was never served: the index drops to 2/3.
        self.assertAlmostEqual(figs["jain_index"], 2 / 3, places=3)
        self.assertEqual(figs["overreclaim_max_pages"], 0)

    def test_settled_counts_a_cgroup_no_run_was_traced_for(self):
        # 9 ends at 2000 pages, under a high watermark of 2048, with no
        # run traced: settled, though not served; without a high
        # watermark the figure is not given.
        final = dict(self.FINAL, **{"9": 2000})
        events = trial_data.parse_trace(TRACE)
        figs = trial_data.pool_figures(events, final, 1638, 2048)
        self.assertEqual(figs["cgroups_served"], 2)
        self.assertEqual(figs["cgroups_settled"], 3)
        figs = trial_data.pool_figures(events, self.FINAL, 1638, 2048)
        self.assertEqual(figs["cgroups_settled"], 2)
        self.assertNotIn("cgroups_settled",
                         trial_data.pool_figures(events, final, 1638))

    def test_overreclaim_is_usage_below_low_at_the_end(self):
        text = TRACE.replace("nr_reclaimed=1362 usage=1638",
                             "nr_reclaimed=1400 usage=1600")
        figs = trial_data.pool_figures(trial_data.parse_trace(text),
                                  {"7": 1600, "8": 1638}, 1638)
        self.assertEqual(figs["overreclaim_max_pages"], 38)

    def test_back_to_back_runs_do_not_overlap(self):
        text = TRACE.replace("10.250000", "10.300000")
        figs = trial_data.pool_figures(trial_data.parse_trace(text),
                                  {"7": 1638, "8": 1638}, 1638)
        self.assertEqual(figs["max_concurrent_runs"], 1)

    def test_excess_is_what_the_cgroup_charged_not_what_the_trace_saw(self):
        # Cgroup 7's worker pauses for its cpu.max while the cgroup fills,
        # so the trace never sees it above 2100 pages: it still reclaimed
        # exactly its excess, as 8 did.
        text = TRACE.replace(
            "10.300000: mm_vmscan_memcg_bgreclaim_end: cgroup_id=7 "
            "nr_reclaimed=1362 usage=1638",
            "10.300000: mm_vmscan_memcg_bgreclaim_end: cgroup_id=7 "
            "nr_reclaimed=400 usage=1700 cpu_ns=1 duration_ns=1 stop=throttled"
            "\n k-1 [000] ..... 10.310000: mm_vmscan_memcg_bgreclaim_queue: "
            "cgroup_id=7 usage=2100 delay_ms=90"
            "\n k-1 [000] ..... 10.500000: mm_vmscan_memcg_bgreclaim_begin: "
            "cgroup_id=7 usage=2100 high_wmark=2048 low_wmark=1638"
            "\n k-1 [000] ..... 10.600000: mm_vmscan_memcg_bgreclaim_end: "
            "cgroup_id=7 nr_reclaimed=962 usage=1638").replace(
            "usage=3000", "usage=2100")
        events = trial_data.parse_trace(text)
        figs = trial_data.pool_figures(events, {"7": 1638, "8": 1638}, 1638)
        self.assertAlmostEqual(figs["jain_index"], 1.0, places=6)
        self.assertEqual(figs["cgroups_served"], 2)
        # Paused, not served, if the throttled end is the last event.
        paused = [e for e in events if e[0] not in (10.31, 10.5, 10.6)]
        figs = trial_data.pool_figures(paused, {"7": 1700, "8": 1638}, 1638)
        self.assertEqual(figs["cgroups_served"], 1)


class RunOrderTest(unittest.TestCase):
    def test_shuffled_only_when_every_trial_has_its_slot(self):
        shuffled = [{"variant": "a", "slot": 2}, {"variant": "b", "slot": 1}]
        self.assertIn("shuffled", bench.run_order(shuffled))
        self.assertIn("same order", bench.run_order(
            shuffled + [{"variant": "c"}]))
        self.assertIn("same order", bench.run_order([]))


class WorkerWaitsTest(unittest.TestCase):
    def test_wait_runs_from_queueing_plus_delay_to_begin(self):
        def ev(ts, kind, cg, **f):
            return (ts, kind, dict(f, cgroup_id=cg))
        events = [ev(10.0, "queue", "7", delay_ms="0"),
                  ev(10.1, "queue", "8", delay_ms="0"),
                  ev(10.2, "begin", "7"),
                  ev(10.25, "begin", "8"),
                  ev(10.3, "queue", "7", delay_ms="100"),
                  ev(10.45, "begin", "7"),
                  # A run with no queueing before it (a retry armed before
                  # the trace began) has no wait.
                  ev(10.5, "begin", "7")]
        waits = trial_data.worker_waits(events, "7")
        self.assertEqual(len(waits), 2)
        self.assertAlmostEqual(waits[0], 200.0)
        self.assertAlmostEqual(waits[1], 50.0)


class OffCpuRunsTest(unittest.TestCase):
    def test_duration_less_cpu_of_one_cgroups_runs(self):
        events = [(1.0, "end", {"cgroup_id": "7", "cpu_ns": "1000000",
                                "duration_ns": "101000000"}),
                  (1.1, "end", {"cgroup_id": "8", "cpu_ns": "1",
                                "duration_ns": "50000001"}),
                  (1.2, "begin", {"cgroup_id": "7"}),
                  (1.3, "end", {"cgroup_id": "7", "cpu_ns": "2000000",
                                "duration_ns": "2500000"})]
        off = trial_data.off_cpu_runs(events, "7")
        self.assertEqual(len(off), 2)
        self.assertAlmostEqual(off[0], 100.0)
        self.assertAlmostEqual(off[1], 0.5)


class TargetTest(unittest.TestCase):
    STATS = {"off": {"p99": (100.0, 90.0, 120.0, 3, [90.0, 100.0, 120.0])},
             "auto": {"p99": (8.0, 7.0, 9.0, 3, [7.0, 8.0, 9.0])},
             "pct": {"p99": (100.0, 80.0, 130.0, 3, [80.0, 100.0, 130.0])},
             "zero": {"p99": (0, 0, 0, 3, [0, 0, 0])},
             "once": {"p99": (5.0, 5.0, 5.0, 1, [5.0])}}
    # The trials behind STATS, a variant's i-th in round i of one boot.
    TRIALS = [{"variant": v, "boot": 1, "round": i, "p99": x}
              for v, m in STATS.items() for i, x in enumerate(m["p99"][4])]

    def test_ratio_met_and_missed_from_the_interval(self):
        verdict, text = scenario.Target("t", "p99", "auto", "off", 0.1).check(self.STATS, self.TRIALS)
        self.assertEqual(verdict, "met")
        self.assertIn("0.080x", text)
        self.assertIn("95% CI", text)
        self.assertIn("over 1 boot, 3 rounds", text)
        self.assertIn("the old rule: CI", text)
        verdict, _ = scenario.Target("t", "p99", "auto", "off", 0.05).check(self.STATS, self.TRIALS)
        self.assertEqual(verdict, "MISSED")

    def test_overlap_is_inconclusive(self):
        verdict, _ = scenario.Target("t", "p99", "pct", "off", 1.0).check(self.STATS, self.TRIALS)
        self.assertEqual(verdict, "inconclusive")

    def test_one_trial_is_no_interval(self):
        # One trial resamples to itself: a zero-width "interval" would
        # read as certainty.
        for mine, ref in (("once", "off"), ("auto", "once")):
            verdict, text = scenario.Target("t", "p99", mine, ref,
                                            0.1).check(self.STATS, self.TRIALS)
            self.assertEqual(verdict, "inconclusive")
            self.assertIn("1 trial", text)
        # No ratio exists whatever the number of trials.
        verdict, text = scenario.Target("t", "p99", "once", "zero",
                                        1).check(self.STATS, self.TRIALS)
        self.assertIsNone(verdict)
        self.assertIn("the reference is 0", text)

    def test_zero_reference_is_not_judged(self):
        verdict, text = scenario.Target("t", "p99", "auto", "zero", 1).check(self.STATS, self.TRIALS)
        self.assertIsNone(verdict)
        self.assertIn("the reference is 0", text)

    def test_unmeasured_is_not_judged(self):
        verdict, text = scenario.Target("t", "p99", "userspace", "off",
                                     1).check(self.STATS, self.TRIALS)
        self.assertIsNone(verdict)
        self.assertEqual(text, "not measured")

    def test_bound_uses_the_worst_trial(self):
        self.assertEqual(scenario.Bound("t", "p99", "auto", 8.5).check(self.STATS, self.TRIALS)[0], "MISSED")
        self.assertEqual(scenario.Bound("t", "p99", "auto", 7.0,
                                     at_most=False).check(self.STATS, self.TRIALS)[0],
                         "met")


if __name__ == "__main__":
    unittest.main()


class ScenarioParametersTest(unittest.TestCase):
    """The report's parameters line: settings, including those of a
    sourced scenario, but not state, paths or arrays."""

    def test_parameters_only(self):
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        os.mkdir(os.path.join(tmp, "bench"))
        scripts = {
            "inner": "INNER_MIB=32\n",
            "outer": ('. "$here/inner.sh"\nOUTER_MAX=$((64 << 20))\n'
                      'OUTER_WMARKS="high=5M low=4M"\nPIN_PID=\n'
                      'POOL=/sys/devices/virtual/workqueue/x\n'
                      'COUNTERS=(a b)\nlocal_name=1\n'),
        }
        for name, text in scripts.items():
            with open(os.path.join(tmp, "bench", name + ".sh"), "w",
                      encoding="utf-8") as f:
                f.write(text)
        with mock.patch.object(bench, "GUEST", tmp):
            self.assertEqual(bench.scenario_parameters("outer"),
                             ["INNER_MIB=32", "OUTER_MAX=$((64 << 20))",
                              'OUTER_WMARKS="high=5M low=4M"'])


class ReportRoundTripTest(unittest.TestCase):
    """--report-only rewrites a report from what the run saved, with the
    run's environment and problems rather than today's."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        patches = [mock.patch.object(bench, "RESULTS", self.tmp),
                   mock.patch.object(bench, "write_plot",
                                     lambda *args: None)]
        for p in patches:
            p.start()
            self.addCleanup(p.stop)
        self.addCleanup(shutil.rmtree, self.tmp)

    def test_rewritten_report_is_identical(self):
        scenario = bench.SCENARIOS["backoff"]
        trials = [{"variant": "auto", "round": 1, "cpu_pct": 0.2},
                  {"variant": "auto", "round": 2, "cpu_pct": 0.4}]
        env = ["base: x", "date: 2026-01-01 00:00 UTC"]
        path = os.path.join(self.tmp, "backoff", "report.md")
        with contextlib.redirect_stdout(io.StringIO()):
            bench.report(scenario, trials, env, ["boot 1: a trial failed"])
            with open(path, encoding="utf-8") as f:
                first = f.read()
            self.assertEqual(bench.load_run(scenario),
                             (trials, env, ["boot 1: a trial failed"]))
            bench.report(scenario, *bench.load_run(scenario))
        with open(path, encoding="utf-8") as f:
            self.assertEqual(f.read(), first)
        self.assertIn("- date: 2026-01-01 00:00 UTC", first)
        self.assertIn("- boot 1: a trial failed", first)

    def test_pooled_latencies_of_the_trials_that_count(self):
        def trial(variant, rnd, values, pgsteal=1000):
            return {"variant": variant, "boot": 1, "round": rnd,
                    "pgsteal_all": pgsteal,
                    trial_data.RAW_KEY: {"unit": "us", "values": values}}

        scenario = bench.SCENARIOS["service"]
        trials = [trial("off", 1, [1000, 60000]), trial("auto", 1, [500, 600]),
                  trial("off", 2, [2000, 3000]), trial("auto", 2, [700, 800]),
                  trial("auto", 3, [90000, 90000], pgsteal=0)]
        path = os.path.join(self.tmp, "service", "report.md")
        with contextlib.redirect_stdout(io.StringIO()):
            bench.report(scenario, trials, ["date: x"], [])
            with open(path, encoding="utf-8") as f:
                first = f.read()
            bench.report(scenario, *bench.load_run(scenario))
        with open(path, encoding="utf-8") as f:
            self.assertEqual(f.read(), first)
        self.assertIn("## Pooled latency (all requests)", first)
        self.assertIn("the trials the rule above rejected left out", first)
        self.assertIn("| auto | 4 | 600 | 800 | 800 | 0% (0) | 0% (0) | "
                      "600 - 800 |", first)
        self.assertIn("- auto vs off: p99 0.013x, 95% CI", first)

    def test_no_saved_run(self):
        with self.assertRaises(HarnessError):
            bench.load_run(bench.SCENARIOS["storm"])

    def test_index_counts_trials_and_minutes(self):
        trials = [{"variant": v, "round": r, "worker_cpu_pct": 0.2}
                  for r in (1, 2) for v in ("noswap", "mlock")]
        trials.append({"variant": "protected", "round": 1, "worker_cpu_pct": 0.1})
        env = ["date: 2026-01-01 00:00 UTC, the run took 7 min"]
        with contextlib.redirect_stdout(io.StringIO()):
            bench.report(bench.SCENARIOS["backoff"], trials, env, [])
            bench.report(bench.SCENARIOS["gap"], [{"variant": "off",
                                                   "wall_s": 1.0}],
                         ["date: 2026-01-01 00:00 UTC, the run took 5 min"],
                         [])
        bench.write_index()
        with open(os.path.join(self.tmp, "README.md"), encoding="utf-8") as f:
            index = f.read()
        self.assertIn("(backoff/report.md): 3 met (2 trials a variant, "
                      "7 min)", index)
        self.assertIn("(gap/report.md): a trade-off, no targets (1 trial a "
                      "variant, 5 min)", index)
        self.assertIn("took 12 min in all", index)
        self.assertIn("Streaming page cache: not run yet", index)


class PooledLatencyTest(unittest.TestCase):
    # off: 500 700 800 1000 2000 3000 11000 60000 us, auto: 100 100 200
    # 200 300 300 400 20000 us.
    ROWS = [{"boot": 1, "round": 1, "variant": "off", "unit": "us",
             "values": [1000, 2000, 3000, 60000]},
            {"boot": 1, "round": 1, "variant": "auto", "unit": "us",
             "values": [100, 200, 300, 400]},
            {"boot": 1, "round": 2, "variant": "off", "unit": "us",
             "values": [500, 11000, 700, 800]},
            {"boot": 1, "round": 2, "variant": "auto", "unit": "us",
             "values": [20000, 300, 200, 100]}]

    def test_percentiles_and_shares_of_all_requests(self):
        lines = bench.pooled_lines(bench.SCENARIOS["service"],
                                   ["floor", "off", "auto"], self.ROWS)
        self.assertIn("| variant | requests | p50 (us) | p99 (us) | p99.9 "
                      "(us) | over 10 ms | over 50 ms | p99 of a trial "
                      "(us) |", lines)
        self.assertIn("| off | 8 | 1000 | 60000 | 60000 | 25% (2) | "
                      "12.5% (1) | 11000 - 60000 |", lines)
        self.assertIn("| auto | 8 | 200 | 20000 | 20000 | 12.5% (1) | "
                      "0% (0) | 400 - 20000 |", lines)
        # service's targets compare auto with floor, off and userspace;
        # only off ran here.
        pairs = [line for line in lines if line.startswith("- ")]
        self.assertEqual(len(pairs), 1)
        self.assertTrue(pairs[0].startswith(
            "- auto vs off: p99 0.333x, 95% CI "), pairs[0])
        self.assertIn("over 50 ms -12.50 points, 95% CI", pairs[0])

    def test_one_trial_is_no_interval(self):
        lines = bench.pooled_lines(bench.SCENARIOS["service"],
                                   ["off", "auto"], self.ROWS[:2])
        self.assertIn("- auto vs off: p99 0.007x; over 50 ms -25.00 points "
                      "(1 trial of a variant, too few for an interval)",
                      lines)

    def test_pairs_from_targets_then_floor_and_off(self):
        self.assertEqual(
            bench.pooled_pairs(bench.SCENARIOS["service"],
                               ["floor", "off", "userspace", "auto"]),
            [("off", "floor"), ("userspace", "floor"), ("userspace", "off"),
             ("auto", "floor"), ("auto", "off"), ("auto", "userspace")])
        # isolation's targets compare off with alone, not alone with off.
        self.assertEqual(
            bench.pooled_pairs(bench.SCENARIOS["isolation"],
                               ["alone", "off", "auto"]),
            [("off", "alone"), ("auto", "off"), ("auto", "alone")])


class RawLatencyTest(unittest.TestCase):
    def test_raw_latencies_move_out_of_the_trials(self):
        trials = [{"variant": "auto", "boot": 2, "round": 1,
                   trial_data.RAW_KEY: {"unit": "us",
                                        "values": [3.0, 1.5]}},
                  {"variant": "off", "round": 1}]
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "lat.jsonl.gz")
            trial_data.write_raw_latencies(trials, path)
            with gzip.open(path, "rt", encoding="utf-8") as f:
                rows = [json.loads(line) for line in f]
        self.assertEqual(rows, [{"boot": 2, "round": 1, "variant": "auto",
                                 "unit": "us", "values": [3, 1.5]}])
        self.assertNotIn(trial_data.RAW_KEY, trials[0])

    def test_no_file_without_raw_latencies(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "lat.jsonl.gz")
            trial_data.write_raw_latencies([{"variant": "off"}], path)
            self.assertFalse(os.path.exists(path))
