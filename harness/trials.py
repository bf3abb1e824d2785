"""What a trial's raw data becomes: the figures the guest's files (request
latencies, background reclaim traces) give each trial, before any
statistics across trials (harness/stats.py) judge them."""

import gzip
import json
import os
import re

from . import lockstat
from .common import HarnessError


def rank(n, pct):
    """The nearest rank, from 1, of the pct-th percentile of n values."""
    return int(max(1, -(-n * pct // 100)))


def percentile(values, pct):
    """Nearest-rank percentile of a non-empty list."""
    return sorted(values)[rank(len(values), pct) - 1]


def jain_index(xs):
    """Jain's fairness index: 1 when all equal, 1/n when one gets all."""
    if not xs or not any(xs):
        return 0.0
    return sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs))


def _latencies(path):
    with open(path, encoding="utf-8") as f:
        return [float(line) for line in f if line.strip()]


def _derive_latency(trial, rundir, key, unit):
    values = _latencies(os.path.join(rundir, trial.pop(key)))
    if not values:
        raise HarnessError(f"no latencies in trial {trial}")
    # Kept until report() writes them to RAW_LATENCIES.
    trial[RAW_KEY] = {"unit": unit, "values": values}
    trial[f"lat_p50_{unit}"] = percentile(values, 50)
    trial[f"lat_p99_{unit}"] = percentile(values, 99)
    trial[f"lat_p999_{unit}"] = percentile(values, 99.9)
    trial[f"lat_max_{unit}"] = max(values)
    trial["operations"] = len(values)


RAW_KEY = "raw_latencies"
RAW_LATENCIES = "latencies.jsonl.gz"


def write_raw_latencies(trials, path):
    """Move every trial's raw latencies out of it into PATH, gzipped JSON
    lines of {boot, round, variant, unit, values}, so that any percentile
    can be recomputed from what is committed.  Written only when a run
    produced them (a report rewritten from trials.jsonl keeps the file)."""
    rows = []
    for t in trials:
        raw = t.pop(RAW_KEY, None)
        if raw:
            rows.append({"boot": t.get("boot"), "round": t.get("round"),
                         "variant": t["variant"], "unit": raw["unit"],
                         "values": [int(v) if v == int(v) else v
                                    for v in raw["values"]]})
    if not rows:
        return
    with open(path, "wb") as f, gzip.GzipFile(fileobj=f, mode="wb",
                                              mtime=0) as z:
        for row in rows:
            z.write((json.dumps(row) + "\n").encode())


def read_raw_latencies(path):
    """The rows write_raw_latencies wrote to PATH; none if it wrote none."""
    if not os.path.exists(path):
        return []
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


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


def pool_figures(events, final_pages, low_pages, high_pages=None):
    """From the trace of one trial and each pressured cgroup's usage at its
    end ({cgroup id: pages}): the most runs in flight at once, the wait
    from a cgroup's first queueing to its first run (ms), the cgroups
    whose last run ended at the low watermark (served), the cgroups at or
    under the high watermark at the end (settled: where a worker was
    queued but found nothing to do, no run is traced, so "served" misses
    them; given high_pages only) and the time from
    the first queueing to the last run's end, the length of a run (p50,
    ms) and the p99 wait in runs of that length, how far below the low
    watermark completed runs left usage (over-reclaim), and Jain's index
    of the pages reclaimed relative to each cgroup's excess over its low
    watermark.

    A cgroup's excess is what it charged beyond the low watermark: its
    usage at the end plus what the workers reclaimed, less the watermark
    (the scenario leaves the workers the only reclaimers).  Usage seen in
    the trace is no measure of it: a worker paused by its cgroup's cpu.max
    resumes while the cgroup still fills, so the trace sees some cgroups
    near their peak and others never above the high watermark."""
    first_queue, first_begin, reclaimed, served = {}, {}, {}, {}
    low_at_begin, below_low, ends, runs = {}, [], [], []
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
            runs.append(int(f["duration_ns"]) / 1e6)
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
    wait_p99 = percentile(waits, 99) if waits else -1
    run_p50 = percentile(runs, 50) if runs else -1
    figures = {
        "max_concurrent_runs": most,
        "wait_p50_ms": percentile(waits, 50) if waits else -1,
        "wait_p99_ms": wait_p99,
        "run_p50_ms": run_p50,
        "wait_p99_runs": wait_p99 / run_p50 if waits and run_p50 > 0
        else -1,
        "cgroups_served": sum(1 for c in final_pages if served.get(c)),
        "serve_s": max(ends) - min(first_queue.values())
        if ends and first_queue else -1,
        "jain_index": jain_index(ratios),
        # How far below the low watermark runs that reached it ended.
        "overreclaim_p50_pages": percentile(below_low, 50) if below_low
        else -1,
        "overreclaim_max_pages": max(below_low) if below_low else -1,
    }
    if high_pages is not None:
        figures["cgroups_settled"] = sum(
            1 for pages in final_pages.values() if pages <= high_pages)
    return figures


def _derive_pool(trial, rundir):
    with open(os.path.join(rundir, trial.pop("trace_file")),
              encoding="utf-8") as f:
        events = parse_trace(f.read())
    # Lines of "cgroup-id name usage-bytes".
    with open(os.path.join(rundir, trial.pop("ids_file")),
              encoding="utf-8") as f:
        final = {cols[0]: int(cols[2]) // 4096
                 for cols in (line.split() for line in f) if cols}
    high = trial.get("high_bytes")
    trial.update(pool_figures(events, final, trial["low_bytes"] // 4096,
                              high // 4096 if high is not None else None))


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
    if "lock_stat_file" in trial:
        # The file stays named: the report lists its longest waits.
        with open(os.path.join(rundir, trial["lock_stat_file"]),
                  encoding="utf-8") as f:
            trial.update(lockstat.figures(lockstat.parse(f.read())))
    return trial
