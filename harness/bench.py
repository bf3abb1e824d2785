"""Benchmarks of memory cgroup background reclaim.

Each scenario runs its variants interleaved (A B C A B C ...) for several
rounds inside one boot (guest/bench/run.sh); the overhead scenario also
alternates boots of the unpatched base and the patched kernel.  The host
turns the trials into medians and spreads, checks the scenario's targets
and writes results/SCENARIO/: report.md, plots and trials.jsonl.  These
machines emulate the guest (TCG), so reports compare variants measured in
the same run, as ratios, not absolute times."""

import hashlib
import json
import os
import re
import statistics
import subprocess
import time

from . import build, deps, guest_run, tree, vm
from .common import GUEST, REPO, HarnessError, log, run
from .stats import MET, MISSED, ratio_interval, verdict

RESULTS = os.path.join(REPO, "results")
BOOT_TIMEOUT = 1800


def percentile(values, pct):
    """Nearest-rank percentile of a non-empty list."""
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * pct // 100))
    return ordered[int(rank) - 1]


def jain_index(xs):
    """Jain's fairness index: 1 when all equal, 1/n when one gets all."""
    if not xs or not any(xs):
        return 0.0
    return sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs))


# --- per-trial derived metrics ---------------------------------------------

def _latencies(path):
    with open(path, encoding="utf-8") as f:
        return [float(line) for line in f if line.strip()]


def _derive_latency(trial, rundir, key, unit):
    values = _latencies(os.path.join(rundir, trial.pop(key)))
    if not values:
        raise HarnessError(f"no latencies in trial {trial}")
    trial[f"lat_p50_{unit}"] = percentile(values, 50)
    trial[f"lat_p99_{unit}"] = percentile(values, 99)
    trial[f"lat_max_{unit}"] = max(values)
    trial["operations"] = len(values)


_TRACE = re.compile(r"\s(\d+\.\d+): mm_vmscan_memcg_bgreclaim_(\w+): (.*)$")


def parse_trace(text):
    """Background reclaim trace events as (seconds, kind, fields) tuples."""
    events = []
    for line in text.splitlines():
        m = _TRACE.search(line)
        if not m:
            continue
        fields = dict(kv.split("=", 1) for kv in m.group(3).split()
                      if "=" in kv)
        events.append((float(m.group(1)), m.group(2), fields))
    return events


def pool_figures(events, final_pages, low_pages):
    """From the trace of one trial and each pressured cgroup's usage at its
    end ({cgroup id: pages}): the most runs in flight at once, the wait
    from a cgroup's first queueing to its first run (ms), the cgroups
    whose last run ended at the low watermark (served) and the time from
    the first queueing to the last run's end, how far below the low
    watermark completed runs left usage (over-reclaim), and Jain's index
    of the pages reclaimed relative to each cgroup's excess over its low
    watermark.

    A cgroup's excess is what it charged beyond the low watermark: its
    usage at the end plus what the workers reclaimed, less the watermark
    (the scenario leaves the workers the only reclaimers).  Usage seen in
    the trace is no measure of it: a worker paused by its CPU budget
    resumes while the cgroup still fills, so the trace sees some cgroups
    near their peak and others never above the high watermark."""
    first_queue, first_begin, reclaimed, served = {}, {}, {}, {}
    low_at_begin, below_low, ends = {}, [], []
    edges = []
    for ts, kind, f in events:
        cg = f.get("cgroup_id")
        usage = int(f.get("usage", 0))
        served[cg] = kind == "end" and f.get("stop") == "done"
        if kind == "queue":
            first_queue.setdefault(cg, ts)
        elif kind == "begin":
            edges.append((ts, 1))
            low_at_begin[cg] = int(f["low_wmark"])
            if cg in first_queue:
                first_begin.setdefault(cg, ts)
        elif kind == "end":
            edges.append((ts, -1))
            ends.append(ts)
            reclaimed[cg] = reclaimed.get(cg, 0) + int(f["nr_reclaimed"])
            if f.get("stop") == "done" and cg in low_at_begin:
                below_low.append(max(0, low_at_begin[cg] - usage))
    running = most = 0
    for _, step in sorted(edges, key=lambda e: (e[0], e[1])):
        running += step
        most = max(most, running)
    waits = [(first_begin[c] - first_queue[c]) * 1e3 for c in first_begin]
    ratios = []
    for cg, pages in final_pages.items():
        excess = pages + reclaimed.get(cg, 0) - low_pages
        ratios.append(reclaimed.get(cg, 0) / excess if excess > 0 else 0.0)
    return {
        "max_concurrent_runs": most,
        "wait_p50_ms": percentile(waits, 50) if waits else -1,
        "wait_p99_ms": percentile(waits, 99) if waits else -1,
        "cgroups_served": sum(1 for c in final_pages if served.get(c)),
        "serve_s": max(ends) - min(first_queue.values())
        if ends and first_queue else -1,
        "jain_index": jain_index(ratios),
        # How far below the low watermark runs that reached it ended.
        "overreclaim_p50_pages": percentile(below_low, 50) if below_low
        else -1,
        "overreclaim_max_pages": max(below_low) if below_low else -1,
    }


def _derive_pool(trial, rundir):
    with open(os.path.join(rundir, trial.pop("trace_file")),
              encoding="utf-8") as f:
        events = parse_trace(f.read())
    # Lines of "cgroup-id name usage-bytes".
    with open(os.path.join(rundir, trial.pop("ids_file")),
              encoding="utf-8") as f:
        final = {cols[0]: int(cols[2]) // 4096
                 for cols in (line.split() for line in f) if cols}
    trial.update(pool_figures(events, final, trial["low_bytes"] // 4096))


def worker_waits(events, cgroup_id):
    """The waits for a worker of one cgroup, in ms: from each queueing
    (plus its delay) to the begin of the run it led to."""
    waits, due = [], None
    for ts, kind, f in events:
        if f.get("cgroup_id") != cgroup_id:
            continue
        if kind == "queue" and due is None:
            due = ts + int(f.get("delay_ms", 0)) / 1e3
        elif kind == "begin" and due is not None:
            waits.append(max(0.0, ts - due) * 1e3)
            due = None
    return waits


def off_cpu_runs(events, cgroup_id):
    """How long each run of one cgroup's worker was off the CPU, in ms:
    its duration less its CPU time, from the end tracepoint.  With one
    pool slot, a run that is off the CPU (throttled by the cgroup's
    cpu.max, or preempted) keeps every other cgroup waiting."""
    return [(int(f["duration_ns"]) - int(f["cpu_ns"])) / 1e6
            for _, kind, f in events
            if kind == "end" and f.get("cgroup_id") == cgroup_id]


def _derive_waits(trial, rundir):
    with open(os.path.join(rundir, trial.pop("waits_file")),
              encoding="utf-8") as f:
        events = parse_trace(f.read())
    waits = worker_waits(events, str(trial.pop("waits_cgroup_id")))
    if "slot_cgroup_id" in trial:
        off = off_cpu_runs(events, str(trial.pop("slot_cgroup_id")))
        trial["slot_off_cpu_ms"] = sum(off)
        trial["slot_runs_off_cpu"] = sum(1 for ms in off if ms >= 10)
    if not waits:
        raise HarnessError(f"no wait for a worker in trial {trial}")
    trial["wait_p50_ms"] = percentile(waits, 50)
    trial["wait_p99_ms"] = percentile(waits, 99)
    trial["wait_max_ms"] = max(waits)
    trial["waits"] = len(waits)


def derive(trial, rundir):
    """Replace the raw-data file names a trial reports with figures."""
    if "latency_ms_file" in trial:
        _derive_latency(trial, rundir, "latency_ms_file", "ms")
    if "latency_us_file" in trial:
        _derive_latency(trial, rundir, "latency_us_file", "us")
    if "trace_file" in trial:
        _derive_pool(trial, rundir)
    if "waits_file" in trial:
        _derive_waits(trial, rundir)
    return trial


# --- statistics and targets ------------------------------------------------

def summarize(trials):
    """{variant: {metric: (median, lowest, highest, n, values)}} over
    numeric metrics."""
    by_variant = {}
    for t in trials:
        by_variant.setdefault(t["variant"], []).append(t)
    out = {}
    for variant, ts in by_variant.items():
        metrics = {}
        for key in ts[0]:
            vals = [t[key] for t in ts if isinstance(t.get(key), (int, float))
                    and key not in ("round", "slot")]
            if vals:
                metrics[key] = (statistics.median(vals), min(vals), max(vals),
                                len(vals), vals)
        out[variant] = metrics
    return out


class Fit:
    """A metric that follows another, compared at equal values of it: a
    trial's `key` is its `metric` over what a least-squares line through
    the `reference` variant's trials predicts at the trial's `covariate`.
    Where the covariate varies between trials for reasons of its own, the
    medians of `metric` compare the luck of the draw; `key` does not."""

    def __init__(self, key, metric, covariate, reference):
        self.key, self.metric = key, metric
        self.covariate, self.reference = covariate, reference

    def apply(self, trials):
        """The trials with `key` added, or as they are when the reference
        has too few distinct points for a line."""
        def measured(t):
            return self.metric in t and self.covariate in t

        ref = [t for t in trials
               if t["variant"] == self.reference and measured(t)]
        try:
            slope, intercept = statistics.linear_regression(
                [t[self.covariate] for t in ref],
                [t[self.metric] for t in ref])
        except statistics.StatisticsError:
            return trials
        out = []
        for t in trials:
            predicted = (intercept + slope * t[self.covariate]
                         if measured(t) else 0)
            out.append(dict(t, **{self.key: t[self.metric] / predicted})
                       if predicted > 0 else t)
        return out


class Target:
    """A claim about two variants' medians: `variant`'s `metric` is at most
    (or at least) `factor` times `reference`'s, judged from the bootstrap
    confidence interval of the ratio (harness/stats.py)."""

    def __init__(self, text, metric, variant, reference, factor,
                 at_most=True):
        self.text, self.metric = text, metric
        self.variant, self.reference = variant, reference
        self.factor, self.at_most = factor, at_most

    def check(self, stats):
        """(verdict, evidence): met, MISSED or inconclusive from the
        interval, or None with the reason when it cannot be judged."""
        try:
            mine = stats[self.variant][self.metric]
            ref = stats[self.reference][self.metric]
        except KeyError:
            return None, "not measured"
        medians = (f"{self.variant} {_fmt(mine[0])} vs {self.reference} "
                   f"{_fmt(ref[0])}")
        target = f"target {'<=' if self.at_most else '>='} {self.factor}x"
        interval = ratio_interval(mine[4], ref[4])
        if interval is None:
            return None, f"{medians} (no ratio: the reference is 0; {target})"
        ratio, lower, upper = interval
        return (verdict(lower, upper, self.factor, self.at_most),
                f"{medians} (ratio {ratio:.3f}x, 95% CI {lower:.3f}-"
                f"{upper:.3f}; {target})")


class Bound:
    """A claim about one variant's median against a fixed number."""

    def __init__(self, text, metric, variant, limit, at_most=True):
        self.text, self.metric, self.variant = text, metric, variant
        self.limit, self.at_most = limit, at_most

    def check(self, stats):
        """(verdict, evidence): a bound holds in every trial, or not."""
        try:
            mine = stats[self.variant][self.metric]
        except KeyError:
            return None, "not measured"
        worst = mine[2] if self.at_most else mine[1]
        met = worst <= self.limit if self.at_most else worst >= self.limit
        return MET if met else MISSED, (
            f"{self.variant}: median {_fmt(mine[0])}, worst {_fmt(worst)} "
            f"(target {'<=' if self.at_most else '>='} {self.limit})")


def _fmt(x):
    if isinstance(x, float) and not x.is_integer():
        return f"{x:.3g}" if abs(x) < 100 else f"{x:.0f}"
    return str(int(x))


# --- scenarios -------------------------------------------------------------

class Scenario:
    """boots: list of (base_kernel, variants); every boot runs `rounds`
    on a VM of `cpus` vCPUs, with clocks that count instructions if
    `icount` (see vm.boot).  fits: Fit metrics derived from the trials
    when the report is written.  script: the guest script in guest/bench/
    that runs the trials, when scenarios share one (default: the name)."""

    def __init__(self, name, title, boots, rounds, metrics, targets,
                 what, cpus=2, icount=False, fits=(), script=None):
        self.name, self.title, self.boots = name, title, boots
        self.rounds, self.metrics, self.targets = rounds, metrics, targets
        self.what, self.cpus, self.icount = what, cpus, icount
        self.fits, self.script = fits, script or name

    def derive(self, trials):
        """The trials with every Fit's metric added."""
        for fit in self.fits:
            trials = fit.apply(trials)
        return trials


BG = ["auto", "pct-90-80"]
# The kswapd streaming scenarios (kswapd and kswapd-icount): variants,
# table and what holds in both.
KSWAPD_VARIANTS = ["pool-1", "pool-2", "pool-1+mglru", "pool-2+mglru"]
KSWAPD_METRICS = [
    ("wall_s", "wall time", "s"),
    ("mib_per_s", "node read throughput", "MiB/s"),
    ("pgscan_direct", "pgscan_direct (node)", "pages"),
    ("pgsteal_direct", "pgsteal_direct (node)", "pages"),
    ("pgsteal_kswapd", "pgsteal_kswapd (with helpers)", "pages"),
    ("pgsteal_kswapd_helper", "pgsteal_kswapd_helper", "pages"),
    ("kswapd_cpu_s", "kswapd CPU", "s"),
    ("pool_cpu_s", "pool's CPU (helpers)", "s"),
    ("pages_per_cpu_s", "kswapd + pool: pages reclaimed per CPU-second",
     "pages/s"),
    ("cpu_s", "guest CPU", "s")]
KSWAPD_STOCK_TARGETS = [
    Bound(f"{v}: no helper work with the bound at 1",
          "pgsteal_kswapd_helper", v, 0)
    for v in ("pool-1", "pool-1+mglru")]
KSWAPD_WHAT = (
    "Most of the guest's memory is mlocked, leaving 900 MiB.  pool-N: "
    "2 readers, each in its own memory cgroup without limits but with "
    "\"auto\" watermarks (kswapd hands helpers only the lruvecs of "
    "cgroups that turned background reclaim on), stream "
    "their own 448 MiB file twice from the ext4 scratch disk (1.75 GiB "
    "through about 700 MiB of page cache), with the background "
    "reclaim pool's max_active at N; 1 is stock kswapd (no helpers), "
    "2 is what the default gives an 8-CPU machine (on this VM "
    "the default is 1); MGLRU is off except in pool-N+mglru, the "
    "same with MGLRU on.  With no limit, no cgroup's own worker runs: "
    "the pool's only work is kswapd's.")

# The kswapd-mixed scenarios (on the host's clock and on an instruction
# clock): variants, table, targets and what holds in both.
KSWAPD_MIXED_VARIANTS = ["pool-1+mixed", "pool-2+mixed", "pool-2+mixed+budget"]
KSWAPD_MIXED_METRICS = [
    ("spin_ops_per_s", "CPU-bound task's work", "batches/s"),
    ("spin_work_at_hog_rate",
     "CPU-bound task's work over stock kswapd's at the hog's throughput",
     "x"),
    ("spin_cpu_share", "CPU-bound task's CPU share", "of one CPU"),
    ("mib_per_s", "hog's read throughput", "MiB/s"),
    ("pgscan_direct", "pgscan_direct (node)", "pages"),
    ("pgsteal_kswapd", "pgsteal_kswapd (with helpers)", "pages"),
    ("pgsteal_kswapd_helper", "pgsteal_kswapd_helper", "pages"),
    ("pgsteal_bgreclaim", "pgsteal_bgreclaim (node)", "pages"),
    ("kswapd_cpu_s", "kswapd CPU", "s"),
    ("pool_cpu_s", "pool's CPU (helpers and workers)", "s"),
    ("hog_bgreclaim_cpu_pct",
     "background reclaim CPU for the hog (worker + helpers)",
     "% of one CPU"),
    ("hog_budget_exhausted", "hog's budget pauses", "pauses"),
    ("cpu_s", "guest CPU", "s")]
KSWAPD_MIXED_TARGETS = [
    *[Target(f"{v}: the CPU-bound task keeps at least 95% of its "
             f"{what} with stock kswapd (pool-1+mixed)",
             metric, v, "pool-1+mixed", 0.95, at_most=False)
      for what, metric in (("work", "spin_ops_per_s"),
                           ("work at the hog's throughput",
                            "spin_work_at_hog_rate"),
                           ("CPU share", "spin_cpu_share"))
      for v in ("pool-2+mixed", "pool-2+mixed+budget")],
    *[Bound(f"{v}: the hog's background reclaim stops at its CPU "
            "budget, 10% of one CPU, give or take a batch",
            "hog_bgreclaim_cpu_pct", v, 11)
      for v in ("pool-2+mixed", "pool-2+mixed+budget")],
    Bound("pool-2+mixed+budget: the hog's budget ran out (its "
          "background reclaim paused)", "hog_budget_exhausted",
          "pool-2+mixed+budget", 1, at_most=False)]
# The task's work per second moves with how fast the hog reads, whatever
# the pool does: compare it at equal hog throughput too.
KSWAPD_MIXED_FITS = [Fit("spin_work_at_hog_rate", "spin_ops_per_s",
                         "mib_per_s", "pool-1+mixed")]
KSWAPD_MIXED_WHAT = (
    "The kswapd scenario's node (900 MiB left beside mlocked memory, "
    "MGLRU off), with one reader streaming two 448 MiB files over "
    "and over as a memory hog in one cgroup while a CPU-bound task "
    "that allocates nothing runs in another for 20 s, the pool's "
    "max_active at 1 (stock kswapd) or 2.  +budget: the hog's cgroup "
    "also has memory.max 1G (the node runs out first) and watermarks "
    "high=512M low=448M, at the default budget, which its worker and "
    "kswapd's helpers share.  The hog's throughput counts the MiB its "
    "reader got through, the pass in flight included.  The task's work "
    "at the hog's throughput is each trial's work over what a straight "
    "line through stock kswapd's trials (work against the hog's "
    "throughput) predicts at that trial's hog throughput.  4 vCPUs.")

SCENARIOS = {s.name: s for s in [
    Scenario(
        "storm", "Throttling storm",
        [(False, ["off", "userspace"] + BG)], 6,
        [("wall_s", "wall time", "s"), ("mib_per_s", "throughput", "MiB/s"),
         ("high_events", "memory.high events", "events"),
         ("lat_p50_ms", "chunk latency p50", "ms"),
         ("lat_p99_ms", "chunk latency p99", "ms"),
         ("lat_max_ms", "chunk latency max", "ms"),
         ("cpu_s", "guest CPU (all tasks, kworkers)", "s"),
         ("pgscan_direct", "pgscan_direct", "pages"),
         ("pgsteal_direct", "pgsteal_direct", "pages"),
         ("pgscan_bgreclaim", "pgscan_bgreclaim", "pages"),
         ("pgsteal_bgreclaim", "pgsteal_bgreclaim", "pages"),
         ("psi_some_us", "PSI memory some", "us")],
        [t for v in BG for t in (
            Target(f"{v}: memory.high events at most 5% of off's",
                   "high_events", v, "off", 0.05),
            Target(f"{v}: p99 chunk latency at least 10x lower than off's",
                   "lat_p99_ms", v, "off", 0.1),
            Target(f"{v}: guest CPU at most 5% above off's",
                   "cpu_s", v, "off", 1.05),
            # Added with patch 0011 (the cgroup pays, no CPU cap by
            # default), before its first run: relief must not cost the
            # cgroup's tasks when no CPU is idle (issue 17).
            Target(f"{v}: p99 chunk latency no worse than off's",
                   "lat_p99_ms", v, "off", 1.0),
            Target(f"{v}: p99 chunk latency below userspace's",
                   "lat_p99_ms", v, "userspace", 1.0),
            Target(f"{v}: guest CPU at most userspace's",
                   "cpu_s", v, "userspace", 1.0))],
        "4 processes per vCPU, started at the same moment, each touch "
        "32 MiB of anonymous memory in 1 MiB chunks, twice, in one "
        "cgroup with memory.high = 128 MiB "
        "(half their total); swap on zswap.  userspace runs psi-reclaimer "
        "with the watermarks auto would choose."),
    Scenario(
        "gap", "How wide auto's gap should be",
        [(False, ["off", "pct-98.44-96.88", "auto", "pct-93.75-87.5",
                  "pct-87.5-75"])], 3,
        [("wall_s", "wall time", "s"),
         ("high_events", "memory.high events", "events"),
         ("lat_p99_ms", "chunk latency p99", "ms"),
         ("lat_max_ms", "chunk latency max", "ms"),
         ("pgscan_direct", "pgscan_direct", "pages"),
         ("pgsteal_bgreclaim", "pgsteal_bgreclaim", "pages"),
         ("bgreclaim_runs", "worker runs", "runs"),
         ("bgreclaim_cpu_usec", "worker CPU", "us"),
         ("cpu_s", "guest CPU (all tasks, kworkers)", "s"),
         ("usage_mean_mib", "mean memory.current", "MiB")],
        [],
        "The throttling storm's workload (4 processes per vCPU touch 32 "
        "MiB each in 1 MiB chunks, twice, under memory.high = 128 MiB, "
        "swap on zswap) with the gap g between memory.high and the high "
        "watermark, and between the watermarks, at 1/64 "
        "(pct-98.44-96.88), 1/32 (auto: 4 MiB here), 1/16 "
        "(pct-93.75-87.5) and 1/8 (pct-87.5-75) of memory.high.  A wider "
        "gap gives the worker more headroom before tasks are throttled "
        "and costs memory the cgroup could have used."),
    Scenario(
        "gap-paced", "How wide auto's gap should be, at a steady rate",
        [(False, [f"{v}@{rate}" for rate in (20, 48, 96)
                  for v in ("off", "pct-98.44-96.88", "pct-96.88-93.75",
                            "auto", "pct-93.75-87.5")])], 3,
        [("mib_per_s", "reader's rate", "MiB/s"),
         ("max_events", "memory.max events", "events"),
         ("pgscan_direct", "pgscan_direct", "pages"),
         ("lat_p99_ms", "1 MiB read latency p99", "ms"),
         ("lat_max_ms", "1 MiB read latency max", "ms"),
         ("pgsteal_bgreclaim", "pgsteal_bgreclaim", "pages"),
         ("bgreclaim_runs", "worker runs", "runs"),
         ("bgreclaim_cpu_usec", "worker CPU", "us"),
         ("cpu_s", "guest CPU (all tasks, kworkers)", "s"),
         ("usage_steady_mib", "memory.current, second half", "MiB")],
        # Declared with patch 0020 (auto's gap follows the charge rate),
        # before its first run: pct-96.88-93.75 is auto's old fixed gap.
        [Target("auto@96: direct reclaim at most half of the fixed 1/32 "
                "gap's", "pgscan_direct", "auto@96", "pct-96.88-93.75@96",
                0.5),
         Target("auto@20: memory.current (second half) at least 0.98x of "
                "the fixed 1/32 gap's", "usage_steady_mib", "auto@20",
                "pct-96.88-93.75@20", 0.98, at_most=False)],
        "pacedread streams a 384 MiB file (3x memory.max = 128 MiB) with "
        "a cold page cache at 20, 48 and 96 MiB/s (variant@rate); the "
        "reader alone manages about 150 MiB/s.  The gap g between "
        "memory.max and the high watermark, and between the watermarks, "
        "is fixed at 1/64 (pct-98.44-96.88: 2 MiB), 1/32 "
        "(pct-96.88-93.75: 4 MiB) or 1/16 (pct-93.75-87.5: 8 MiB); auto "
        "starts at 1/32 and widens, up to 1/8, while the reader still "
        "meets memory.max.  Where the worker keeps up, a gap too "
        "small for it to start in time shows as direct reclaim at "
        "memory.max; a wider one costs memory the cgroup could have "
        "used."),
    Scenario(
        "stream", "Streaming page cache",
        [(False, ["off", "userspace"] + BG + ["auto+budget"])], 5,
        [("wall_s", "wall time", "s"), ("mib_per_s", "throughput", "MiB/s"),
         # Named before patch 0011: the cgroup's system time, which since
         # then includes the worker's.  Its old meaning is the next line.
         ("reader_system_s", "reader system time (cgroup's, with the "
          "worker's)", "s"),
         ("reader_own_system_s", "reader's own system time", "s"),
         ("cpu_s", "guest CPU", "s"),
         ("pgscan_direct", "pgscan_direct", "pages"),
         ("pgscan_bgreclaim", "pgscan_bgreclaim", "pages"),
         ("max_events", "memory.max events", "events"),
         ("bgreclaim_cpu_usec", "worker CPU", "us")],
        [t for v in BG + ["auto+budget"] for t in (
            Target(f"{v}: direct-reclaim scans at most 1% of off's",
                   "pgscan_direct", v, "off", 0.01),
            Target(f"{v}: throughput at least off's",
                   "mib_per_s", v, "off", 1.0, at_most=False),
            Target(f"{v}: reader system time at most off's",
                   "reader_system_s", v, "off", 1.0))],
        "dd streams a 512 MiB file (8x memory.max = 64 MiB) from the ext4 "
        "scratch disk with a cold page cache.  The background reclaim "
        "variants run with the defaults: the cgroup pays for its worker's "
        "CPU and has no cap on it (patch 0011).  auto+budget caps it at "
        "10% of one CPU (memory.reclaim_wmarks.budget 10000 100000), the "
        "default before 0011, whose runs were reported as auto and "
        "pct-90-80; the targets are those it was held to then."),
    Scenario(
        "isolation", "Isolation",
        [(False, ["alone", "off", "userspace", "auto"])], 3,
        [("lat_p50_us", "operation latency p50", "us"),
         ("lat_p99_us", "operation latency p99", "us"),
         ("lat_max_us", "operation latency max", "us"),
         ("latency_pgscan_direct", "latency task pgscan_direct", "pages"),
         ("copy_pgscan_direct", "copy pgscan_direct", "pages"),
         ("pgscan_bgreclaim", "pgscan_bgreclaim (parent)", "pages")],
        [Target("auto: latency task p99 within 1.2x of its p99 alone",
                "lat_p99_us", "auto", "alone", 1.2),
         Target("off: latency task p99 within 1.2x of its p99 alone "
                "(for reference)", "lat_p99_us", "off", "alone", 1.2),
         Target("userspace: latency task p99 within 1.2x of its p99 alone "
                "(for reference)", "lat_p99_us", "userspace", "alone", 1.2)],
        "Under a parent with memory.max = 256 MiB: a task holding 64 MiB "
        "(memory.low = 96 MiB) times operations that read 64 random pages "
        "and sometimes fault a fresh one, 1 ms apart, for 20 s; its "
        "sibling copies a 384 MiB file over and over.  Background reclaim "
        "(or psi-reclaimer) works on the parent."),
    Scenario(
        "overhead", "Fast-path overhead",
        [(True, ["base"]), (False, ["off", "auto"])] * 2, 6,
        [("faults_per_cpu_s", "faults per CPU second", "faults/s"),
         ("cpu_s", "CPU time", "s"), ("bgreclaim_runs", "worker runs",
                                      "runs")],
        [Target("off within 0.5% of the unpatched base",
                "faults_per_cpu_s", "off", "base", 0.995, at_most=False),
         Target("auto, below its watermark, within 1% of the base",
                "faults_per_cpu_s", "auto", "base", 0.99, at_most=False),
         Bound("auto never runs the worker below the watermark",
               "bgreclaim_runs", "auto", 0)],
        "A process maps 64 MiB, touches every page (THP off), unmaps it, "
        "for 3 s of wall time, in a cgroup with memory.max = 1 GiB, far "
        "from any watermark.  Boots alternate: base, patched, base, "
        "patched.  QEMU counts instructions for the guest's clocks "
        "(-icount), so CPU time here measures the instructions executed, "
        "free of the host's scheduling noise; it does not see cache or "
        "branch-prediction effects.",
        icount=True),
    Scenario(
        "backoff", "Pressure without progress",
        [(False, ["noswap", "mlock", "protected"])], 2,
        [("worker_cpu_pct", "worker CPU after backoff", "% of one CPU"),
         ("runs", "worker runs in the window", "runs"),
         ("giveups", "give-ups in the window", "give-ups"),
         ("usage_mib", "usage at the end", "MiB"),
         ("high_wmark_mib", "high watermark", "MiB")],
        [Bound(f"{case}: worker CPU under 1% of one CPU after backoff",
               "worker_cpu_pct", case, 1.0)
         for case in ("noswap", "mlock", "protected")],
        "A cgroup with memory.max = 64 MiB and high=25% low=20% holds "
        "32 MiB the worker cannot reclaim and keeps charging (1 MiB every "
        "10 ms, or none for the page cache under memory.min).  Once the "
        "worker has given up, its runs, give-ups and CPU time are counted "
        "for 60 s."),
    Scenario(
        "tenant", "A tenant's worst setting",
        [(False, ["off", "auto", "pct-0.02-0.01", "pct-0.02-0.01+budget",
                  "off+cpumax", "pct-0.02-0.01+cpumax"])], 5,
        [("bystander_ops_per_s", "bystanders' work (all vCPUs)",
          "batches/s"),
         ("bystander_cpu_share", "bystanders' CPU share", "of all vCPUs"),
         ("tenant_mib_per_s", "tenant's read throughput", "MiB/s"),
         ("tenant_cpu_s", "CPU charged to the tenant's cgroup", "s"),
         ("tenant_cpu_pct", "CPU charged to the tenant's cgroup",
          "% of one CPU"),
         ("worker_cpu_s", "worker CPU for the tenant (charged to it)", "s"),
         ("worker_cpu_pct", "worker CPU", "% of all vCPUs"),
         ("cpu_s", "guest CPU", "s"),
         ("pgscan_direct", "pgscan_direct", "pages"),
         ("pgsteal_bgreclaim", "pgsteal_bgreclaim", "pages"),
         ("bgreclaim_runs", "worker runs", "runs")],
        [*[Target(f"{v}: bystanders keep at least 95% of the {what} they "
                  "get when the tenant's reclaim is off",
                  metric, v, "off", 0.95, at_most=False)
           for v, what, metric in (
               ("pct-0.02-0.01", "work", "bystander_ops_per_s"),
               ("pct-0.02-0.01", "CPU share", "bystander_cpu_share"),
               ("auto", "work", "bystander_ops_per_s"),
               ("auto", "CPU share", "bystander_cpu_share"))],
         *[Target("pct-0.02-0.01+cpumax: bystanders keep at least 95% of "
                  f"the {what} they get when the tenant, under the same "
                  "cpu.max, has its reclaim off", metric,
                  "pct-0.02-0.01+cpumax", "off+cpumax", 0.95, at_most=False)
           for what, metric in (("work", "bystander_ops_per_s"),
                                ("CPU share", "bystander_cpu_share"))],
         Bound("pct-0.02-0.01+cpumax: the tenant's tasks and worker "
               "together use at most its cpu.max, 25% of one CPU, give or "
               "take a period", "tenant_cpu_pct", "pct-0.02-0.01+cpumax",
               26),
         # The default before 0011, now an administrator's cap.
         Bound("pct-0.02-0.01+budget: the worker stops at its budget, "
               "10% of one CPU (5% of two vCPUs), give or take a batch",
               "worker_cpu_pct", "pct-0.02-0.01+budget", 5.5)],
        "A tenant cgroup (memory.max = 64 MiB) reads a 128 MiB file over "
        "and over for 20 s while one CPU-bound bystander per vCPU, in a "
        "sibling cgroup, counts loop batches; the bystanders' CPU share is "
        "their cgroup's CPU time over 20 s on every vCPU.  Variants are "
        "the tenant's "
        "memory.reclaim_wmarks: off, auto, and high=0.02% low=0.01%, the "
        "most aggressive setting the grammar accepts, with the defaults "
        "(the tenant pays for its worker, no cap), with the budget capped "
        "at 10% of one CPU (+budget, the default before patch 0011), and "
        "with the tenant under cpu.max 25000 100000 (+cpumax, the "
        "reference then being off under the same cpu.max)."),
    Scenario(
        "many", "Many cgroups",
        [(False, ["pct-50-40"])], 2,
        [("max_concurrent_runs", "most runs in flight", "runs"),
         ("pool_max_active", "pool bound (max_active)", "workers"),
         ("wait_p50_ms", "wait for a worker p50", "ms"),
         ("wait_p99_ms", "wait for a worker p99", "ms"),
         ("jain_index", "Jain's index", ""),
         ("cgroups_served", "pressured cgroups served (last run "
          "ended at low)", "cgroups"),
         ("overreclaim_p50_pages", "over-reclaim below low p50", "pages"),
         ("overreclaim_max_pages", "over-reclaim below low max", "pages"),
         ("serve_s", "first queueing to last run's end", "s"),
         ("pgsteal_direct", "direct reclaim", "pages"),
         ("pgsteal_kswapd", "kswapd reclaim", "pages")],
        [Bound("every pressured cgroup is served", "cgroups_served",
               "pct-50-40", 100, at_most=False),
         Bound("Jain's fairness index at least 0.9", "jain_index",
               "pct-50-40", 0.9, at_most=False),
         # The index counts only the workers' reclaim.
         Bound("no direct reclaim in the cgroups", "pgsteal_direct",
               "pct-50-40", 0),
         Bound("no kswapd reclaim in the cgroups", "pgsteal_kswapd",
               "pct-50-40", 0)],
        "1,000 cgroups with memory.max = 16 MiB and watermarks "
        "high=50% low=40%; 100 of them each read a 12 MiB file at once "
        "(clean page cache between the watermarks and the limit, so only "
        "the workers reclaim).  Runs in flight come from the tracepoints "
        "and must never exceed max_active.  A cgroup is served when its "
        "last run ended at its low watermark; its excess, for Jain's "
        "index, is its usage at the end plus what the workers reclaimed, "
        "less the low watermark."),
    Scenario(
        "neighbour", "A throttled neighbour in the pool",
        [(False, ["alone", "throttled"])], 5,
        [("wait_p50_ms", "b's wait for a worker p50", "ms"),
         ("wait_p99_ms", "b's wait for a worker p99", "ms"),
         ("wait_max_ms", "b's wait for a worker max", "ms"),
         ("waits", "b's queueings", "runs"),
         ("b_pgscan_direct", "b's direct reclaim scans", "pages"),
         ("b_mib_per_s", "b's read throughput", "MiB/s"),
         ("a_worker_cpu_ms", "a's worker CPU", "ms"),
         ("a_pauses", "a's runs paused for its quota", "pauses"),
         ("slot_off_cpu_ms", "a's runs off the CPU in the slot, in all",
          "ms"),
         ("slot_runs_off_cpu", "a's runs off the CPU 10 ms or more", "runs"),
         ("a_cpu_pct", "a's CPU (tasks and worker)", "% of one CPU")],
        [Target("throttled: b's p99 wait for a worker at most 1.25x alone's",
                "wait_p99_ms", "throttled", "alone", 1.25),
         Target("throttled: b's direct reclaim at most 1.25x alone's",
                "b_pgscan_direct", "throttled", "alone", 1.25),
         Bound("throttled: a's tasks and worker use at most its cpu.max, "
               "1% of one CPU, give or take a batch", "a_cpu_pct",
               "throttled", 2),
         # Declared with 0011's batch-cost check, before its first run.
         Bound("throttled: at most 2 of a's runs sit off the CPU in the "
               "slot for 10 ms or more", "slot_runs_off_cpu", "throttled",
               2)],
        "One pool slot (max_active 1).  Cgroup b reads a 192 MiB file "
        "through memory.max = 64 MiB with high=90% low=80%.  In "
        "throttled, cgroup a, under cpu.max 1000 100000 (1% of one CPU), "
        "holds 96 MiB of page cache under high=10% low=5% of its 128 MiB "
        "limit: its worker always has work and almost never CPU.  b's "
        "waits for a worker come from the queue and begin tracepoints."),
    Scenario(
        "kswapd", "kswapd and its helpers in the pool",
        [(False, KSWAPD_VARIANTS)], 3, KSWAPD_METRICS, KSWAPD_STOCK_TARGETS,
        KSWAPD_WHAT + "  The VM has 4 vCPUs (on 2 host cores): with 2, a "
        "reader and kswapd leave no idle CPU, and kswapd never uses a "
        "helper.", cpus=4),
    Scenario(
        "kswapd-icount", "kswapd and its helpers, on an instruction clock",
        [(False, KSWAPD_VARIANTS)], 4, KSWAPD_METRICS,
        [*KSWAPD_STOCK_TARGETS,
         *[Target(f"{v}: node read throughput at least 95% of stock "
                  f"kswapd's ({ref})", "mib_per_s", v, ref, 0.95,
                  at_most=False)
           for v, ref in (("pool-2", "pool-1"),
                          ("pool-2+mglru", "pool-1+mglru"))]],
        KSWAPD_WHAT + "  As kswapd, on 4 vCPUs, but under QEMU's -icount: "
        "one host thread runs the vCPUs in turn and guest time counts the "
        "instructions they execute (and real time while all wait for I/O), "
        "so helpers cannot add speed by running in parallel, and no vCPU "
        "waits for a host core while the guest thinks it runs.  Throughput "
        "here measures the work the guest does per MiB read.",
        cpus=4, icount=True, script="kswapd"),
    Scenario(
        "kswapd-mixed", "kswapd's helpers and a CPU-bound bystander",
        [(False, KSWAPD_MIXED_VARIANTS)], 5, KSWAPD_MIXED_METRICS,
        KSWAPD_MIXED_TARGETS,
        KSWAPD_MIXED_WHAT + "  On 2 host cores, the task's work per second "
        "depends both on the CPU the guest's scheduler gives it (its CPU "
        "share: its cgroup's usage_usec over the 20 s) and on how fast the "
        "host runs its vCPU meanwhile, which the other vCPUs' load "
        "changes.", cpus=4, fits=KSWAPD_MIXED_FITS, script="kswapd"),
    Scenario(
        "kswapd-mixed-icount",
        "kswapd's helpers and a CPU-bound bystander, on an instruction clock",
        [(False, KSWAPD_MIXED_VARIANTS)], 5, KSWAPD_MIXED_METRICS,
        KSWAPD_MIXED_TARGETS,
        KSWAPD_MIXED_WHAT + "  As kswapd-mixed, but under QEMU's -icount: "
        "one host thread runs the vCPUs in turn and guest time counts the "
        "instructions they execute, as if the 4 vCPUs shared one CPU.  "
        "Every instruction the hog, kswapd or a helper executes is then "
        "one the task does not: its work per second measures what all the "
        "others cost it, and no host scheduling enters.", cpus=4,
        icount=True, fits=KSWAPD_MIXED_FITS, script="kswapd"),
]}


# --- running -----------------------------------------------------------------

def _boot(scenario, n, base, variants, rounds, variant_cfg, bindir):
    kernel = build.kernel_name(variant_cfg, base)
    rdir = guest_run.rundir(f"bench-{scenario.name}-{n}")
    log(f"{scenario.name}: boot {n} of {len(scenario.boots)} ({kernel}), "
        f"{rounds} rounds of {', '.join(variants)}")
    console = vm.boot(build.kernel_image(variant_cfg, base), rdir,
                      [os.path.join(GUEST, "bench", "run.sh"), rdir, bindir,
                       scenario.name, scenario.script, str(rounds),
                       kernel] + variants,
                      cpus=scenario.cpus, timeout=BOOT_TIMEOUT,
                      icount=scenario.icount)
    problems = guest_run.check_guest_log(rdir, console)
    if guest_run.read_exit_code(rdir) not in (None, "0"):
        problems.append(f"boot {n}: a trial failed; see "
                        f"{os.path.join(rdir, 'console.log')}")
    trials = []
    path = os.path.join(rdir, "trials.jsonl")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            trials = [derive(json.loads(line), rdir) for line in f
                      if line.strip()]
    return trials, problems


def run_scenario(scenario, variant_cfg, rounds=None):
    """Run all boots of a scenario; return (trials, problems)."""
    rounds = rounds or scenario.rounds
    if any(base for base, _ in scenario.boots):
        build.build(variant_cfg, base=True)
    bindir = guest_run.compile_guest_programs()
    trials, problems = [], []
    for n, (base, variants) in enumerate(scenario.boots, 1):
        t, p = _boot(scenario, n, base, variants, rounds, variant_cfg,
                     bindir)
        trials += t
        problems += p
    return trials, problems


# --- reporting ---------------------------------------------------------------

_PARAMETER = re.compile(r"^[A-Z][A-Z0-9_]*=[^(/\s]")
_SOURCED = re.compile(r'^\. "\$here/([\w-]+)\.sh"')


def scenario_parameters(name):
    """The NAME=value settings of the guest scenario script and of the
    scenario scripts it sources: sizes and durations, not the state
    (empty values), sysfs paths or arrays it also keeps in capitals."""
    params = []
    with open(os.path.join(GUEST, "bench", f"{name}.sh"),
              encoding="utf-8") as f:
        for line in f:
            sourced = _SOURCED.match(line)
            if sourced:
                params += scenario_parameters(sourced.group(1))
            elif _PARAMETER.match(line):
                params.append(line.strip())
    return params


def environment(scenario, variant_cfg):
    """What a run of SCENARIO on the VARIANT_CFG kernel ran on and with."""
    conf = deps.read_base_conf()
    cfg = os.path.join(build.outdir(variant_cfg), ".config")
    with open(cfg, "rb") as f:
        cfg_sha = hashlib.sha256(f.read()).hexdigest()[:16]
    series = tree.series()
    return [
        f"base: {conf['package']} {conf['version']}",
        f"patches: {len(series)} ({', '.join(series) or 'none'})",
        f"harness commit: {_git_head()}",
        f"config: {variant_cfg} (configs/ fragments on tinyconfig), "
        f".config sha256 {cfg_sha}",
        f"VM: QEMU TCG (no KVM), {scenario.cpus} vCPUs, 4 GiB, "
        "1 GiB swap disk, ext4 scratch disk, virtme-ng"
        + (", -icount shift=0 (guest time counts instructions)"
           if scenario.icount else ""),
        f"date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
        "parameters: `" + "`, `".join(scenario_parameters(scenario.script))
        + "`",
    ]


def _git_head():
    """HEAD, marked when the code that ran (all but results/) differs."""
    res = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"],
                         capture_output=True, text=True, check=False)
    head = res.stdout.strip() or "unknown"
    dirty = subprocess.run(["git", "-C", REPO, "status", "--porcelain",
                            "--", ".", ":!results"],
                           capture_output=True, text=True, check=False)
    return head + (" with uncommitted changes" if dirty.stdout.strip()
                   else "")


def run_order(trials):
    """How the trials' variants were ordered within each round: runs since
    the order was shuffled record each trial's slot in its round."""
    if trials and all("slot" in t for t in trials):
        return "the variants' order shuffled in every round"
    return "the variants in the same order in every round"


def render_report(scenario, stats, trials, env, problems):
    variants = list(stats)
    lines = [f"# {scenario.title}", "", scenario.what, "",
             "Each cell: median [lowest - highest] over "
             f"{max(s[3] for v in stats.values() for s in v.values())} "
             f"trials per variant, in the same boot(s), {run_order(trials)}.",
             ""]
    lines.append("| metric | " + " | ".join(variants) + " |")
    lines.append("|---|" + "---|" * len(variants))
    for key, label, unit in scenario.metrics:
        cells = []
        for v in variants:
            s = stats[v].get(key)
            cells.append(f"{_fmt(s[0])} [{_fmt(s[1])} - {_fmt(s[2])}]"
                         if s else "-")
        lines.append(f"| {label} ({unit}) | " + " | ".join(cells) + " |"
                     if unit else f"| {label} | " + " | ".join(cells) + " |")
    lines += ["", "## Targets", "",
              "A ratio's verdict is read from its bootstrap 95% confidence "
              "interval (ratio of the medians, each variant's trials "
              "resampled on their own): met when the whole interval meets "
              "the target, MISSED when none of it does, inconclusive "
              "otherwise.  A bound on one variant must hold in every "
              "trial.", ""]
    results = []
    if not scenario.targets:
        lines.append("None: this scenario measures a trade-off; see the "
                     "notes.")
    for target in scenario.targets:
        word, evidence = target.check(stats)
        word = word or "not judged"
        results.append(word)
        lines.append(f"- **{word}**: {target.text}: {evidence}")
    if scenario.name == "many":
        lines += _pool_bound_lines(trials)
    notes = os.path.join(RESULTS, scenario.name, "notes.md")
    if os.path.exists(notes):
        with open(notes, encoding="utf-8") as f:
            lines += ["", f.read().strip()]
    if problems:
        lines += ["", "## Problems during the run", ""]
        lines += [f"- {p}" for p in problems]
    lines += ["", "## Environment", ""] + [f"- {e}" for e in env]
    lines += [f"- plot: ![{scenario.title}]({scenario.name}.png)", ""]
    return "\n".join(lines), results


def _pool_bound_lines(trials):
    over = [t for t in trials
            if t["max_concurrent_runs"] > t["pool_max_active"]]
    word = "MISSED" if over else "met"
    return [f"- **{word}**: runs in flight never exceed the pool bound: "
            f"at most {max(t['max_concurrent_runs'] for t in trials)} with "
            f"max_active {trials[0]['pool_max_active']}, in "
            f"{len(trials)} trials"]


def write_plot(scenario, stats, out):
    spec = {"title": f"{scenario.title}: median, bars span lowest to "
                     "highest", "panels": []}
    for key, label, unit in scenario.metrics:
        bars = [{"label": v, "median": s[key][0], "low": s[key][1],
                 "high": s[key][2]} for v, s in stats.items() if key in s]
        if bars:
            spec["panels"].append({"metric": label, "unit": unit,
                                   "bars": bars})
    spec_path = out + ".json"
    with open(spec_path, "w", encoding="utf-8") as f:
        json.dump(spec, f)
    try:
        run([deps.VENV_PYTHON, "-m", "harness.plot", spec_path, out],
            cwd=REPO, quiet=True)
    finally:
        os.remove(spec_path)


def load_run(scenario):
    """(trials, environment, problems) of the scenario's last run, as
    report() saved them in results/NAME/."""
    outdir = os.path.join(RESULTS, scenario.name)
    paths = [os.path.join(outdir, f) for f in ("trials.jsonl", "run.json")]
    for path in paths:
        if not os.path.exists(path):
            raise HarnessError(f"no {os.path.relpath(path)}: run the "
                               "scenario first")
    with open(paths[0], encoding="utf-8") as f:
        trials = [json.loads(line) for line in f if line.strip()]
    with open(paths[1], encoding="utf-8") as f:
        run_info = json.load(f)
    return trials, run_info["environment"], run_info["problems"]


def report(scenario, trials, env, problems):
    """Write results/NAME/: the trials with the run's environment and
    problems (so that the report can be rewritten from them alone), the
    report and its plot.  Return the verdicts: met, MISSED, inconclusive
    or not judged."""
    outdir = os.path.join(RESULTS, scenario.name)
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, "trials.jsonl"), "w",
              encoding="utf-8") as f:
        for t in trials:
            f.write(json.dumps(t, sort_keys=True) + "\n")
    with open(os.path.join(outdir, "run.json"), "w", encoding="utf-8") as f:
        json.dump({"environment": env, "problems": problems}, f, indent=1)
        f.write("\n")
    trials = scenario.derive(trials)
    stats = summarize(trials)
    # In the scenario's order, not the shuffled order the trials ran in.
    declared = [v for _, variants in scenario.boots for v in variants]
    stats = {v: stats[v] for v in dict.fromkeys(declared + list(stats))
             if v in stats}
    text, verdicts = render_report(scenario, stats, trials, env, problems)
    with open(os.path.join(outdir, "report.md"), "w", encoding="utf-8") as f:
        f.write(text)
    write_plot(scenario, stats, os.path.join(outdir, f"{scenario.name}.png"))
    log(f"wrote {os.path.relpath(outdir)}/report.md")
    print(text, flush=True)
    return verdicts


def write_index():
    """results/README.md: every scenario's targets, from its report."""
    lines = ["# Benchmark results", "",
             "Written by `make bench`; each scenario's report has the "
             "tables, plots, environment and parameters.", ""]
    for name, scenario in SCENARIOS.items():
        path = os.path.join(RESULTS, name, "report.md")
        if not os.path.exists(path):
            lines.append(f"- {scenario.title}: not run yet")
            continue
        with open(path, encoding="utf-8") as f:
            found = re.findall(
                r"^- \*\*(met|MISSED|inconclusive|not judged)\*\*",
                f.read(), re.M)
        counts = ", ".join(f"{found.count(w)} {w}"
                           for w in ("met", "MISSED", "inconclusive",
                                     "not judged")
                           if w in found) or "a trade-off, no targets"
        lines.append(f"- [{scenario.title}]({name}/report.md): {counts}")
    with open(os.path.join(RESULTS, "README.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
