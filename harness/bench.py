"""Benchmarks of memory cgroup background reclaim.

Each scenario runs its variants interleaved (A B C A B C ...) for several
rounds inside one boot (guest/bench/run.sh); the overhead scenario also
alternates boots of the unpatched base and the patched kernel.  The host
turns the trials into medians and spreads, checks the scenario's targets
and writes results/SCENARIO/: report.md, plots, trials.jsonl and the raw
latencies (latencies.jsonl.gz) where a scenario records them.  These
machines emulate the guest (TCG), so reports compare variants measured in
the same run, as ratios, not absolute times."""

import hashlib
import itertools
import json
import os
import re
import statistics
import subprocess
import time

from . import build, deps, guest_run, scenario as scenario_decl, tree, vm
from .common import GUEST, REPO, HarnessError, log, run
from .scenario import Target, fmt
from .stats import (MIN_TRIALS, POOLED_RESAMPLES, pooled_intervals,
                    rejected_text, share_over)
from .trials import (RAW_LATENCIES, derive, percentile, read_raw_latencies,
                     write_raw_latencies)

RESULTS = os.path.join(REPO, "results")
BOOT_TIMEOUT = 1800


# Every scenario, from the declarations beside the guest scripts.
SCENARIOS = scenario_decl.load_all(os.path.join(GUEST, "bench"))


# --- statistics --------------------------------------------------------------

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
                    and key not in ("boot", "round", "slot")]
            if vals:
                metrics[key] = (statistics.median(vals), min(vals), max(vals),
                                len(vals), vals)
        out[variant] = metrics
    return out


# --- running -----------------------------------------------------------------

def _boot(base, scenario, n, unpatched, variants, rounds, variant_cfg,
          bindir):
    kernel = build.kernel_name(base, variant_cfg, unpatched)
    rdir = guest_run.rundir(f"bench-{base.name}-{scenario.name}-{n}")
    log(f"{scenario.name}: boot {n} of {len(scenario.boots)} ({kernel}), "
        f"{rounds} rounds of {', '.join(variants)}")
    console = vm.boot(build.kernel_image(base, variant_cfg, unpatched), rdir,
                      [os.path.join(GUEST, "bench", "run.sh"), rdir, bindir,
                       scenario.name, scenario.script, str(rounds),
                       kernel] + variants,
                      cpus=scenario.cpus, timeout=BOOT_TIMEOUT,
                      icount=scenario.icount,
                      trace_events=scenario.trace_events)
    problems = guest_run.check_guest_log(rdir, console)
    if guest_run.read_exit_code(rdir) not in (None, "0"):
        problems.append(f"boot {n}: a trial failed; see "
                        f"{os.path.join(rdir, 'console.log')}")
    trials = []
    path = os.path.join(rdir, "trials.jsonl")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            trials = [derive(dict(json.loads(line), boot=n), rdir)
                      for line in f if line.strip()]
    return trials, problems


def run_scenario(base, scenario, variant_cfg, rounds=None):
    """Run all boots of a scenario on BASE; return (trials, problems)."""
    rounds = rounds or scenario.rounds
    if any(unpatched for unpatched, _ in scenario.boots):
        build.build(base, variant_cfg, unpatched=True)
    bindir = guest_run.compile_guest_programs()
    trials, problems = [], []
    for n, (unpatched, variants) in enumerate(scenario.boots, 1):
        t, p = _boot(base, scenario, n, unpatched, variants, rounds,
                     variant_cfg, bindir)
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


def environment(base, scenario, variant_cfg, seconds):
    """What a run of SCENARIO on the VARIANT_CFG kernel of BASE, which
    took `seconds` (boots included), ran on and with."""
    cfg = os.path.join(build.outdir(base, variant_cfg), ".config")
    with open(cfg, "rb") as f:
        cfg_sha = hashlib.sha256(f.read()).hexdigest()[:16]
    series = tree.series(base)
    return [
        f"base: {base.label}",
        f"patches: {len(series)} in {base.series}/ "
        f"({', '.join(series) or 'none'})",
        f"harness commit: {_git_head()}",
        f"config: {variant_cfg} (configs/ fragments on tinyconfig), "
        f".config sha256 {cfg_sha}",
        f"VM: QEMU TCG (no KVM), {scenario.cpus} vCPUs, 4 GiB, "
        "1 GiB swap disk, ext4 scratch disk, virtme-ng"
        + (", -icount shift=0 (guest time counts instructions)"
           if scenario.icount else ""),
        f"date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
        f"the run took {seconds / 60:.0f} min",
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


TARGETS_TEXT = (
    "A ratio's verdict is read from its 95% confidence interval: met when "
    "the whole interval meets the target, MISSED when none of it does, "
    "inconclusive otherwise.  The interval is a hierarchical bootstrap "
    "of the ratio of the medians: boots resampled, then rounds within "
    "each drawn boot, a drawn round's variants together, as they ran.  "
    "So a round's and a boot's noise stays paired between the variants, "
    "and a difference that varies from boot to boot widens the interval; "
    "with one boot, how boots differ is not in it.  Until 2026-11-29 the "
    "verdict came from an interval that resampled each variant's trials "
    "on its own; that old rule's interval and verdict stay beside each "
    "target, as the rule the targets were set with.  A bound on one "
    "variant must hold in every trial.")


def render_report(scenario, stats, trials, env, problems, rejected=(),
                  latencies=()):
    variants = list(stats)
    most = max(s[3] for v in stats.values() for s in v.values())
    lines = [f"# {scenario.title}", "", scenario.what, "",
             f"Each cell: median [lowest - highest] over {most} "
             f"trial{'s' if most > 1 else ''} per variant, in the same "
             f"boot(s), {run_order(trials)}.", ""]
    if scenario.pressure:
        lines += [f"Rule, fixed before the run: {scenario.pressure.text()}; "
                  + rejected_text(rejected, len(trials) + len(rejected)),
                  ""]
    lines.append("| metric | " + " | ".join(variants) + " |")
    lines.append("|---|" + "---|" * len(variants))
    for key, label, unit in scenario.metrics:
        cells = []
        for v in variants:
            s = stats[v].get(key)
            cells.append(f"{fmt(s[0])} [{fmt(s[1])} - {fmt(s[2])}]"
                         if s else "-")
        lines.append(f"| {label} ({unit}) | " + " | ".join(cells) + " |"
                     if unit else f"| {label} | " + " | ".join(cells) + " |")
    lines += ["", "## Targets", "", TARGETS_TEXT, ""]
    results = []
    if not scenario.targets:
        lines.append("None: this scenario measures a trade-off; see the "
                     "notes.")
    for target in scenario.targets:
        word, evidence = target.check(stats, trials)
        word = word or "not judged"
        results.append(word)
        lines.append(f"- **{word}**: {target.text}: {evidence}")
    if scenario.name == "many":
        lines += _pool_bound_lines(trials)
    if latencies:
        lines += pooled_lines(scenario, variants, latencies, rejected)
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


# Request latencies over these (ms) are what a service's users notice.
SLOW_MS = (10, 50)
_PER_MS = {"ms": 1, "us": 1000}
POOLED_PCTS = ((50, "p50"), (99, "p99"), (99.9, "p99.9"))
POOLED_TEXT = (
    "For context, not a verdict: each variant's pooled p99 over a "
    f"reference's, and the difference of their shares over {SLOW_MS[-1]} "
    "ms in percentage points, with a 95% interval from a hierarchical "
    f"bootstrap ({POOLED_RESAMPLES} resamples, fixed seed): boots "
    "resampled, then rounds within each drawn boot, then requests within "
    "each drawn trial, a drawn round's variants together, as they ran.  "
    "The pairs are those the targets compare and every variant against "
    "floor and off, where they ran.  Added on 2026-11-29, after the "
    "results it was first shown beside, so it judges no target.")


def pooled_pairs(scenario, variants):
    """(variant, reference) pairs whose pooled latencies the report
    compares: those the targets compare, then every variant against the
    no-limit floor and against off; each pair once, in the order of the
    variants."""
    found = [(t.variant, t.reference) for t in scenario.targets
             if isinstance(t, Target)]
    found += [(v, ref) for ref in ("floor", "off") for v in variants]
    pairs, seen = [], set()
    for mine, ref in found:
        key = frozenset((mine, ref))
        if mine != ref and key <= set(variants) and key not in seen:
            seen.add(key)
            pairs.append((mine, ref))
    return sorted(pairs, key=lambda p: variants.index(p[0]))


def pooled_lines(scenario, variants, latencies, rejected=()):
    """The report's section on every request of a variant's trials
    together, the latency its users met over the whole run, from the
    rows of RAW_LATENCIES of the trials that count."""
    values = {}
    for row in latencies:
        values.setdefault(row["variant"], []).append(row["values"])
    variants = [v for v in variants if v in values]
    unit = latencies[0]["unit"]
    limits = [ms * _PER_MS[unit] for ms in SLOW_MS]
    lines = ["", "## Pooled latency (all requests)", "",
             "Every request of a variant's trials taken together"
             + (", the trials the rule above rejected left out"
                if rejected else "")
             + ": the latency its users met over the run, where the table "
             "above gives each trial's percentiles and their median.  "
             "Percentiles are nearest-rank, as each trial's; beside them, "
             "the share of requests slower than "
             + " and ".join(f"{ms} ms" for ms in SLOW_MS)
             + ", and the lowest and highest p99 of one trial.", "",
             f"| variant | requests | "
             + " | ".join(f"{label} ({unit})" for _, label in POOLED_PCTS)
             + " | " + " | ".join(f"over {ms} ms" for ms in SLOW_MS)
             + f" | p99 of a trial ({unit}) |",
             "|---|" + "---|" * (len(POOLED_PCTS) + len(SLOW_MS) + 2)]
    for v in variants:
        ordered = sorted(itertools.chain.from_iterable(values[v]))
        shares = [share_over(ordered, limit) for limit in limits]
        p99s = [percentile(vals, 99) for vals in values[v]]
        lines.append(
            f"| {v} | {len(ordered)} | "
            + " | ".join(fmt(percentile(ordered, pct))
                         for pct, _ in POOLED_PCTS)
            + " | " + " | ".join(f"{100 * share:.3g}% "
                                 f"({round(share * len(ordered))})"
                                 for share in shares)
            + f" | {fmt(min(p99s))} - {fmt(max(p99s))} |")
    pairs = pooled_pairs(scenario, variants)
    if not pairs:
        return lines
    intervals = pooled_intervals(
        [(r["boot"], r["round"], r["variant"], r["values"])
         for r in latencies], pairs, 99, limits[-1])
    lines += ["", POOLED_TEXT, ""]
    for mine, ref in pairs:
        ratio, share = intervals[mine, ref]
        # As for a target: one trial's requests resampled say nothing of
        # how the next trial would go.
        fewest = min(len(values[mine]), len(values[ref]))
        enough = fewest >= MIN_TRIALS
        if ratio:
            text = f"p99 {ratio[0]:.3f}x" + (
                f", 95% CI {ratio[1]:.3f}-{ratio[2]:.3f}" if enough else "")
        else:
            text = "p99: no ratio, the reference's is 0"
        text += f"; over {SLOW_MS[-1]} ms {100 * share[0]:+.2f} points" + (
            f", 95% CI {100 * share[1]:+.2f} to {100 * share[2]:+.2f}"
            if enough else
            f" ({fewest} trial of a variant, too few for an interval)")
        lines.append(f"- {mine} vs {ref}: {text}")
    return lines


def target_lines(scenario, stats, key):
    """The level each target on metric `key` sets, for the plot: a
    ratio's factor times its reference's median, or a bound's limit."""
    lines = []
    for t in scenario.targets:
        if t.metric != key:
            continue
        if isinstance(t, Target):
            if t.reference in stats and key in stats[t.reference]:
                lines.append({"y": t.factor * stats[t.reference][key][0],
                              "label": f"{t.variant}: {t.factor}x "
                                       f"{t.reference}"})
        else:
            lines.append({"y": t.limit, "label": f"{t.variant}: bound"})
    return lines


def write_plot(scenario, stats, out):
    spec = {"title": f"{scenario.title}: median, bars span lowest to "
                     "highest, dots are trials, dashed lines targets",
            "panels": []}
    for key, label, unit in scenario.metrics:
        bars = [{"label": v, "median": s[key][0], "low": s[key][1],
                 "high": s[key][2], "points": s[key][4]}
                for v, s in stats.items() if key in s]
        if bars:
            spec["panels"].append({"metric": label, "unit": unit,
                                   "bars": bars,
                                   "lines": target_lines(scenario, stats,
                                                         key)})
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
    write_raw_latencies(trials, os.path.join(outdir, RAW_LATENCIES))
    with open(os.path.join(outdir, "trials.jsonl"), "w",
              encoding="utf-8") as f:
        for t in trials:
            f.write(json.dumps(t, sort_keys=True) + "\n")
    with open(os.path.join(outdir, "run.json"), "w", encoding="utf-8") as f:
        json.dump({"environment": env, "problems": problems}, f, indent=1)
        f.write("\n")
    trials = scenario.derive(trials)
    rejected = []
    if scenario.pressure:
        trials, rejected = scenario.pressure.split(trials)
    stats = summarize(trials)
    # In the scenario's order, not the shuffled order the trials ran in.
    declared = [v for _, variants in scenario.boots for v in variants]
    stats = {v: stats[v] for v in dict.fromkeys(declared + list(stats))
             if v in stats}
    counted = {(t.get("boot"), t.get("round"), t["variant"])
               for t in trials}
    latencies = [row for row in read_raw_latencies(
                     os.path.join(outdir, RAW_LATENCIES))
                 if (row["boot"], row["round"], row["variant"]) in counted]
    text, verdicts = render_report(scenario, stats, trials, env, problems,
                                   rejected, latencies)
    with open(os.path.join(outdir, "report.md"), "w", encoding="utf-8") as f:
        f.write(text)
    write_plot(scenario, stats, os.path.join(outdir, f"{scenario.name}.png"))
    log(f"wrote {os.path.relpath(outdir)}/report.md")
    print(text, flush=True)
    return verdicts


_TOOK = re.compile(r"the run took (\d+) min")


def _run_summary(name):
    """(trials per variant, minutes the run took or None) of the run
    recorded in results/NAME/."""
    counts = {}
    with open(os.path.join(RESULTS, name, "trials.jsonl"),
              encoding="utf-8") as f:
        for line in f:
            if line.strip():
                variant = json.loads(line)["variant"]
                counts[variant] = counts.get(variant, 0) + 1
    with open(os.path.join(RESULTS, name, "run.json"), encoding="utf-8") as f:
        took = _TOOK.search(" ".join(json.load(f)["environment"]))
    return max(counts.values(), default=0), took and int(took.group(1))


def write_index():
    """results/README.md: every scenario's targets, from its report, and
    the trials and minutes its run took."""
    lines = ["# Benchmark results", "",
             "Written by `make bench`; each scenario's report has the "
             "tables, plots, environment and parameters.", ""]
    minutes = []
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
        trials, took = _run_summary(name)
        minutes.append(took)
        lines.append(f"- [{scenario.title}]({name}/report.md): {counts} "
                     f"({trials} trial{'s' if trials != 1 else ''} a "
                     f"variant" + (f", {took} min)" if took is not None
                                   else ")"))
    if minutes and None not in minutes:
        lines += ["", f"The scenarios' runs took {sum(minutes)} min in "
                  "all (boots included, not the kernel builds)."]
    with open(os.path.join(RESULTS, "README.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
