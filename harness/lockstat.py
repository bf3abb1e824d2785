"""Read /proc/lock_stat tables that a benchmark trial kept on a lockstat
kernel (configs/lockstat.config): where tasks waited for locks while the
trial's workload ran (issue 49's priority-inversion question)."""

import json
import os
import re

# A class's line: its name (rwsems and rwlocks have a -W and an -R line),
# then con-bounces, contentions, waittime min/max/total/avg, acq-bounces,
# acquisitions, holdtime min/max/total/avg; times in microseconds.
_CLASS = re.compile(r"^\s*(?P<name>\S.*?)(?:-[RW])?:"
                    r"(?P<nums>(?:\s+[\d.]+){12})\s*$")

# The classes the reports name, by a part of their lockdep name: the
# locks a reclaimer holds where a task of the served cgroup, or of any
# other, may wait for it.
WATCHED = {
    "mmap_lock": "&mm->mmap_lock",
    "i_mmap_rwsem": "i_mmap_rwsem",
    "anon_vma": "&anon_vma->rwsem",
    "lru_lock": "&lruvec->lru_lock",
    "cgroup_mutex": "cgroup_mutex",
}


def add(a, b):
    """Two statistics of a class together (a may be None)."""
    if a is None:
        return dict(b)
    return {"contentions": a["contentions"] + b["contentions"],
            "wait_us": a["wait_us"] + b["wait_us"],
            "wait_max_us": max(a["wait_max_us"], b["wait_max_us"]),
            "acquisitions": a["acquisitions"] + b["acquisitions"],
            "hold_us": a["hold_us"] + b["hold_us"]}


def parse(text):
    """{class name: {"contentions", "wait_us", "wait_max_us",
    "acquisitions", "hold_us"}}, the -R and -W lines of a class added."""
    classes = {}
    for line in text.splitlines():
        m = _CLASS.match(line)
        if not m:
            continue
        n = [float(x) for x in m["nums"].split()]
        line_stats = {"contentions": n[1], "wait_us": n[4],
                      "wait_max_us": n[3], "acquisitions": n[7],
                      "hold_us": n[10]}
        classes[m["name"]] = add(classes.get(m["name"]), line_stats)
    return classes


def figures(classes):
    """A trial's metrics: for each watched class, and for all classes
    together, the time tasks waited (ms), the longest wait (ms) and how
    many times a task waited."""
    out = {}
    groups = {key: [c for name, c in classes.items() if part in name]
              for key, part in WATCHED.items()}
    groups["all"] = list(classes.values())
    for key, members in groups.items():
        out[f"lockwait_ms_{key}"] = sum(c["wait_us"] for c in members) / 1e3
        out[f"lockwait_max_ms_{key}"] = max(
            (c["wait_max_us"] for c in members), default=0.0) / 1e3
        out[f"contentions_{key}"] = sum(c["contentions"] for c in members)
    return out


def top(classes, n=10):
    """The n classes tasks waited longest for: (name, stats), longest
    first."""
    return sorted(classes.items(), key=lambda kv: -kv[1]["wait_us"])[:n]


def by_variant(rundir):
    """{variant: {class name: stats}}, each variant's lock_stat tables
    in RUNDIR (a run of a lockstat scenario) added over its trials."""
    totals = {}
    with open(os.path.join(rundir, "trials.jsonl"), encoding="utf-8") as f:
        for line in f:
            trial = json.loads(line)
            if "lock_stat_file" not in trial:
                continue
            with open(os.path.join(rundir, trial["lock_stat_file"]),
                      encoding="utf-8") as t:
                classes = parse(t.read())
            into = totals.setdefault(trial["variant"], {})
            for name, c in classes.items():
                into[name] = add(into.get(name), c)
    return totals


def render(totals, n=12):
    """Text: each variant's n classes waited for longest."""
    out = []
    for variant, classes in totals.items():
        out.append(f"{variant}: class, contentions, wait ms, longest wait "
                   "ms, hold ms")
        out += [f"  {name:40} {c['contentions']:9.0f} "
                f"{c['wait_us'] / 1e3:10.1f} {c['wait_max_us'] / 1e3:8.1f} "
                f"{c['hold_us'] / 1e3:10.1f}"
                for name, c in top(classes, n)]
    return "\n".join(out)
