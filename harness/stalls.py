"""What a traced service trial's slow requests waited for (scenario
service-trace, guest/bench/service.sh): while requests over a threshold
were outstanding, were memcached's threads on a CPU, runnable but waiting
for one, or blocked; who had the CPUs; and which reclaimers ran.

Slow requests that overlap are one stall: a stalled server delays every
request queued behind it, so each stall is counted once, over the union
of its requests' windows (from when each was due to its reply)."""

import json
import os
import re
from collections import defaultdict

_LINE = re.compile(r"^\s*(?P<comm>.+?)-(?P<pid>\d+)\s+\[(?P<cpu>\d+)\]\s+\S+\s+"
                   r"(?P<ts>\d+\.\d+): (?P<event>\w+): (?P<fields>.*)$")
_SWITCH = re.compile(r"prev_comm=(?P<prev_comm>.*?) prev_pid=(?P<prev_pid>\d+) "
                     r"prev_prio=\d+ prev_state=(?P<prev_state>\S+) ==> "
                     r"next_comm=(?P<next_comm>.*?) next_pid=(?P<next_pid>\d+)")
_WAKEUP = re.compile(r"comm=(?P<comm>.*?) pid=(?P<pid>\d+) ")
# Reclaimers, by their begin and end events.
RECLAIM = {"mm_vmscan_memcg_bgreclaim": "background",
           "mm_vmscan_memcg_reclaim": "memcg",
           "mm_vmscan_direct_reclaim": "direct"}
# A thread's state after it left a CPU, from sched_switch's prev_state.
_LEFT = {"R": "runnable", "R+": "runnable", "S": "sleeping", "D": "blocked"}
STATES = ("running", "runnable", "blocked", "sleeping")
_SHRINK = re.compile(r"nr_scanned=(?P<scanned>\d+) nr_reclaimed=(?P<reclaimed>\d+)"
                     r" nr_dirty=(?P<dirty>\d+) .* nr_activate_anon=(?P<act_anon>\d+)"
                     r" nr_activate_file=(?P<act_file>\d+) .*flags=(?P<flags>\S+)")
SHRINK_KEYS = ("scanned", "reclaimed", "activated", "dirty")
# A folio entering or leaving a file's page cache; ofs is in bytes.
_PAGECACHE = re.compile(r"dev (?P<dev>\d+:\d+) ino (?P<ino>[0-9a-f]+) "
                        r"pfn=\S+ ofs=(?P<ofs>\d+) order=(?P<order>\d+)")
PAGECACHE_KEYS = ("added", "read_again", "removed_background",
                  "removed_other")


def _merge(windows):
    """Overlapping (start, end) windows as disjoint ones, sorted."""
    merged = []
    for start, end in sorted(windows):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [tuple(w) for w in merged]


def _overlap(a0, a1, windows):
    """Seconds of [a0, a1) inside the disjoint, sorted WINDOWS."""
    return sum(max(0.0, min(a1, w1) - max(a0, w0)) for w0, w1 in windows)


def stall_windows(latencies_us, start_us, rate, threshold_us):
    """The stalls: windows (seconds, the trace's clock) of the requests
    slower than THRESHOLD_US, merged.  Request I was due at START_US +
    I / RATE seconds."""
    interval = 1e6 / rate
    return _merge(((start_us + i * interval) / 1e6,
                   (start_us + i * interval + lat) / 1e6)
                  for i, lat in enumerate(latencies_us) if lat > threshold_us)


def parse(text):
    """The trace's events as (seconds, cpu, pid, event, fields)."""
    for line in text.splitlines():
        m = _LINE.match(line)
        if m:
            yield (float(m["ts"]), int(m["cpu"]), int(m["pid"]), m["event"],
                   m["fields"])


def attribute(events, tids, windows):
    """Over the stall WINDOWS: seconds memcached's threads (TIDS) spent
    in each state, seconds of CPU by command, and seconds each kind of
    reclaimer ran (background: any worker; memcg and direct: in TIDS)."""
    states = defaultdict(float)
    cpu_by_comm = defaultdict(float)
    reclaim = defaultdict(float)
    thread = {}             # tid: (state, since)
    on_cpu = {}             # cpu: (comm, since)
    in_reclaim = {}         # (kind, pid): since
    last = None
    for ts, cpu, pid, event, fields in events:
        last = ts
        if event == "sched_switch":
            m = _SWITCH.search(fields)
            if not m:
                continue
            prev, nxt = int(m["prev_pid"]), int(m["next_pid"])
            if cpu in on_cpu:
                comm, since = on_cpu[cpu]
                cpu_by_comm[comm] += _overlap(since, ts, windows)
            on_cpu[cpu] = ("idle" if nxt == 0 else m["next_comm"], ts)
            for tid, state in ((prev, _LEFT.get(m["prev_state"], "sleeping")),
                               (nxt, "running")):
                if tid in tids:
                    if tid in thread:
                        old, since = thread[tid]
                        states[old] += _overlap(since, ts, windows)
                    thread[tid] = (state, ts)
        elif event == "sched_wakeup":
            m = _WAKEUP.search(fields)
            tid = int(m["pid"]) if m else None
            if tid in tids and tid in thread and thread[tid][0] != "running":
                old, since = thread[tid]
                states[old] += _overlap(since, ts, windows)
                thread[tid] = ("runnable", ts)
        else:
            for prefix, kind in RECLAIM.items():
                if not event.startswith(prefix) or (
                        kind != "background" and pid not in tids):
                    continue
                if event.endswith("_begin"):
                    in_reclaim[(kind, pid)] = ts
                elif (kind, pid) in in_reclaim:
                    reclaim[kind] += _overlap(in_reclaim.pop((kind, pid)), ts,
                                              windows)
    if last is not None:
        for tid, (state, since) in thread.items():
            states[state] += _overlap(since, last, windows)
        for comm, since in on_cpu.values():
            cpu_by_comm[comm] += _overlap(since, last, windows)
        for (kind, _), since in in_reclaim.items():
            reclaim[kind] += _overlap(since, last, windows)
    return dict(states), dict(cpu_by_comm), dict(reclaim)


def shrink_totals(events, tids):
    """What each reclaimer's scans of the inactive lists found over the
    whole trial (mm_vmscan_lru_shrink_inactive): {reclaimer: {"anon" or
    "file": {scanned, reclaimed, activated, dirty}}}, the reclaimer being
    "background" (a task that began a background reclaim run),
    "memcached" (TIDS, reclaiming directly or at memory.high) or "other"."""
    events = list(events)
    workers = {pid for _, _, pid, event, _ in events
               if event == "mm_vmscan_memcg_bgreclaim_begin"}
    totals = {}
    for _, _, pid, event, fields in events:
        m = _SHRINK.search(fields) if event == "mm_vmscan_lru_shrink_inactive" \
            else None
        if not m:
            continue
        who = ("background" if pid in workers else
               "memcached" if pid in tids else "other")
        lru = "anon" if "ANON" in m["flags"] else "file"
        t = totals.setdefault(who, {}).setdefault(
            lru, dict.fromkeys(SHRINK_KEYS, 0))
        t["scanned"] += int(m["scanned"])
        t["reclaimed"] += int(m["reclaimed"])
        t["activated"] += int(m["act_anon"]) + int(m["act_file"])
        t["dirty"] += int(m["dirty"])
    return totals


def page_cache_churn(events):
    """What each file's page cache went through over the trial: {(dev,
    inode): {added, read_again, removed_background, removed_other}} in
    pages.  read_again counts pages added after the trace saw them
    removed (a lower bound of refaults: pages removed before the trace
    began are missed); a removal is "background" when the task removing
    the page is one that began a background reclaim run."""
    events = list(events)
    workers = {pid for _, _, pid, event, _ in events
               if event == "mm_vmscan_memcg_bgreclaim_begin"}
    removed, churn = set(), {}
    for _, _, pid, event, fields in events:
        if event not in ("mm_filemap_add_to_page_cache",
                         "mm_filemap_delete_from_page_cache"):
            continue
        m = _PAGECACHE.search(fields)
        if not m:
            continue
        f = (m["dev"], int(m["ino"], 16))
        t = churn.setdefault(f, dict.fromkeys(PAGECACHE_KEYS, 0))
        first, pages = int(m["ofs"]) // 4096, 1 << int(m["order"])
        keys = {(f, first + i) for i in range(pages)}
        if event == "mm_filemap_add_to_page_cache":
            t["added"] += pages
            t["read_again"] += len(keys & removed)
            removed -= keys
        else:
            who = "background" if pid in workers else "other"
            t[f"removed_{who}"] += pages
            removed |= keys
    return churn


def _file_names(path):
    """{(dev, inode): name} from the lines "MAJOR:MINOR INODE NAME" that
    the guest wrote beside a trace; {} without that file."""
    if not os.path.exists(path):
        return {}
    names = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            cols = line.split(maxsplit=2)
            if len(cols) == 3:
                names[(cols[0], int(cols[1]))] = cols[2].strip()
    return names


def _file_name(names, f):
    """The name of file F = (dev, inode) in NAMES.  The root of a guest
    that shares the host's files reports another device to stat than
    its page cache does: there, an inode listed once names the file."""
    if f in names:
        return names[f]
    same = [n for (_, ino), n in names.items() if ino == f[1]]
    if len(same) == 1:
        return f"{same[0]} (by inode)"
    return f"{f[0]} inode {f[1]}"


def _read_lines(path):
    with open(path, encoding="utf-8") as f:
        return f.read().split()


def trial_report(rundir, trial, rate, threshold_us):
    """The stalls of one traced TRIAL (a line of trials.jsonl in RUNDIR)."""
    lat = [float(x) for x in _read_lines(
        os.path.join(rundir, trial["latency_us_file"]))]
    windows = stall_windows(lat, float(trial["start_us"]), rate, threshold_us)
    trace = os.path.join(rundir, trial["sched_trace_file"])
    tids = {int(t) for t in _read_lines(trace[:-len(".trace")] + ".tids")}
    with open(trace, encoding="utf-8", errors="replace") as f:
        events = list(parse(f.read()))
    states, cpu, reclaim = attribute(events, tids, windows)
    names = _file_names(trace[:-len(".trace")] + ".files")
    churn = {_file_name(names, f): t
             for f, t in page_cache_churn(events).items()}
    return {"variant": trial["variant"], "round": trial["round"],
            "slow": sum(x > threshold_us for x in lat), "requests": len(lat),
            "stalls": len(windows),
            "stall_s": sum(w1 - w0 for w0, w1 in windows),
            "thread_states_s": states, "cpu_by_comm_s": cpu,
            "reclaim_s": reclaim, "shrink": shrink_totals(events, tids),
            "page_cache": churn,
            "trace_overrun": trial.get("trace_overrun", 0)}


def report(rundir, rate=500, threshold_ms=50):
    """Every traced trial of RUNDIR, as trial_report() gives them."""
    with open(os.path.join(rundir, "trials.jsonl"), encoding="utf-8") as f:
        trials = [json.loads(line) for line in f if line.strip()]
    return [trial_report(rundir, t, rate, threshold_ms * 1000)
            for t in trials if "sched_trace_file" in t]


def render(reports, top=4):
    """Text for reports: one paragraph a trial."""
    out = []
    for r in reports:
        s = r["stall_s"]
        out.append(f"{r['variant']} round {r['round']}: {r['slow']} of "
                   f"{r['requests']} requests slow, in {r['stalls']} stalls "
                   f"lasting {s:.2f} s (trace events lost: "
                   f"{r['trace_overrun']})")
        for who, lrus in sorted(r["shrink"].items()):
            out.append(f"  {who} reclaim over the trial: " + "; ".join(
                f"{lru} " + ", ".join(f"{k} {v}" for k, v in t.items())
                for lru, t in sorted(lrus.items())))
        churn = sorted(r.get("page_cache", {}).items(),
                       key=lambda kv: (-kv[1]["read_again"],
                                       -kv[1]["added"]))
        for name, t in churn[:top]:
            if t["read_again"] or t["removed_background"] + \
                    t["removed_other"]:
                out.append(f"  page cache of {name}: " + ", ".join(
                    f"{k.replace('_', ' ')} {v}" for k, v in t.items()))
        if not s:
            continue
        states = ", ".join(f"{k} {r['thread_states_s'].get(k, 0):.2f} s"
                           for k in STATES)
        out.append(f"  memcached's threads, summed: {states}")
        cpus = sorted(r["cpu_by_comm_s"].items(), key=lambda kv: -kv[1])
        out.append("  the CPUs went to: " + ", ".join(
            f"{comm} {sec / s:.0%}" for comm, sec in cpus[:top]) +
            " (of one CPU's stall time)")
        rec = r["reclaim_s"]
        out.append("  reclaim meanwhile: " + ", ".join(
            f"{kind} {rec.get(kind, 0):.2f} s" for kind in RECLAIM.values()))
    return "\n".join(out)
