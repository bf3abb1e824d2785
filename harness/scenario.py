"""What a benchmark scenario is, and where it is declared.

Each guest script guest/bench/SCRIPT.sh runs the trials of one or more
scenarios; SCRIPT.toml beside it declares them, one [[scenario]] table
each: what runs (variants, boots, rounds, the VM), what the report
shows (metrics) and what must hold (targets, fits, the pressure rule).
Adding a scenario is a trial() in a guest script and a table in the
.toml beside it; the statistics that judge it are in harness/stats.py."""

import os
import statistics
import tomllib

from . import kconfig
from .stats import (INCONCLUSIVE, MET, MIN_TRIALS, MISSED, PressureRule,
                    hierarchical_ratio_interval, ratio_interval, verdict)


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
    (or at least) `factor` times `reference`'s, judged from the
    hierarchical bootstrap confidence interval of the ratio
    (harness/stats.py)."""

    def __init__(self, text, metric, variant, reference, factor,
                 at_most=True, was=None):
        self.text, self.metric = text, metric
        self.variant, self.reference = variant, reference
        self.factor, self.at_most = factor, at_most
        # (old factor, when and why it changed): a target changed after a
        # result keeps the old one, whose verdict the evidence gives too.
        self.was = was

    def check(self, stats, trials):
        """(verdict, evidence): met, MISSED or inconclusive from the
        interval over `trials`, the trials that count, or None with the
        reason when it cannot be judged.  The evidence gives beside it
        what the rule the targets were set with, each variant's trials
        resampled on their own, would read."""
        try:
            mine = stats[self.variant][self.metric]
            ref = stats[self.reference][self.metric]
        except KeyError:
            return None, "not measured"
        medians = (f"{self.variant} {fmt(mine[0])} vs {self.reference} "
                   f"{fmt(ref[0])}")
        target = f"target {'<=' if self.at_most else '>='} {self.factor}x"
        interval = hierarchical_ratio_interval(trials, self.metric,
                                               self.variant, self.reference)
        if interval is None:
            return None, f"{medians} (no ratio: the reference is 0; {target})"
        fewest = min(len(mine[4]), len(ref[4]))
        if fewest < MIN_TRIALS:
            # A lone trial resamples to itself: no interval, no verdict.
            return INCONCLUSIVE, (f"{medians} ({fewest} trial of a variant, "
                                  f"too few for an interval; {target})")
        ratio, lower, upper = interval
        _, old_lower, old_upper = ratio_interval(mine[4], ref[4])
        old = verdict(old_lower, old_upper, self.factor, self.at_most)
        evidence = (f"{medians} (ratio {ratio:.3f}x, 95% CI {lower:.3f}-"
                    f"{upper:.3f} over {_layout(trials, self.variant)}; "
                    f"{target}); each variant resampled on its own, the "
                    f"old rule: CI {old_lower:.3f}-{old_upper:.3f}, {old}")
        if self.was:
            factor, why = self.was
            evidence += (f"; the target was {factor}x ({why}), which "
                         f"reads {verdict(lower, upper, factor, self.at_most)}")
        return verdict(lower, upper, self.factor, self.at_most), evidence


def _layout(trials, variant):
    """How many boots and rounds `variant`'s trials came from."""
    boots = {t.get("boot") for t in trials if t["variant"] == variant}
    rounds = sum(1 for t in trials if t["variant"] == variant)
    return (f"{len(boots)} boot{'s' if len(boots) > 1 else ''}, "
            f"{rounds} round{'s' if rounds > 1 else ''}")


class Bound:
    """A claim about one variant's median against a fixed number."""

    def __init__(self, text, metric, variant, limit, at_most=True):
        self.text, self.metric, self.variant = text, metric, variant
        self.limit, self.at_most = limit, at_most

    def check(self, stats, _trials):
        """(verdict, evidence): a bound holds in every trial, or not."""
        try:
            mine = stats[self.variant][self.metric]
        except KeyError:
            return None, "not measured"
        worst = mine[2] if self.at_most else mine[1]
        met = worst <= self.limit if self.at_most else worst >= self.limit
        return MET if met else MISSED, (
            f"{self.variant}: median {fmt(mine[0])}, worst {fmt(worst)} "
            f"(target {'<=' if self.at_most else '>='} {self.limit})")


def fmt(x):
    if isinstance(x, float) and not x.is_integer():
        return f"{x:.3g}" if abs(x) < 100 else f"{x:.0f}"
    return str(int(x))


class Scenario:
    """boots: list of (unpatched, variants), unpatched when the boot is
    of the unpatched base; every boot runs `rounds` on a VM of `cpus`
    vCPUs, with clocks that count instructions if `icount` and the trace
    events `trace_events` enabled from boot (see vm.boot), on the kernel
    of config variant `config` (None: the one `bench --variant` names).
    fits: Fit metrics derived from the trials
    when the report is written.  script: the guest script in guest/bench/
    that runs the trials, the name of the .toml that declares the scenario
    (scenarios that differ only in variants or clock share one).
    pressure: the PressureRule that rejects trials, if any."""

    def __init__(self, name, title, boots, rounds, metrics, targets,
                 what, script, cpus=2, icount=False, fits=(),
                 pressure=None, trace_events=(), config=None):
        self.name, self.title, self.boots = name, title, boots
        self.rounds, self.metrics, self.targets = rounds, metrics, targets
        self.what, self.cpus, self.icount = what, cpus, icount
        self.fits, self.script = fits, script
        self.pressure = pressure
        self.trace_events = tuple(trace_events)
        self.config = config

    def derive(self, trials):
        """The trials with every Fit's metric added."""
        for fit in self.fits:
            trials = fit.apply(trials)
        return trials


def _target(table):
    """A Target when the table names a reference, else a Bound."""
    common = (table["text"], table["metric"], table["variant"])
    at_most = table.get("at_most", True)
    if "reference" in table:
        was = ((table["was_factor"], table["was_why"])
               if "was_factor" in table else None)
        return Target(*common, table["reference"], table["factor"], at_most,
                      was)
    return Bound(*common, table["limit"], at_most)


def _scenario(table, script):
    """A Scenario from one [[scenario]] table of SCRIPT.toml.  `boots`
    boots of the patched kernel each run `variants`; with
    `base_variants`, every one of them follows a boot of the unpatched
    base that runs those."""
    known = {"name", "title", "variants", "boots", "base_variants",
             "rounds", "metrics", "target", "fit", "pressure", "what",
             "cpus", "icount", "trace_events", "config"}
    unknown = set(table) - known
    if unknown:
        raise ValueError(f"{script}.toml: {table.get('name')}: unknown "
                         f"keys {', '.join(sorted(unknown))}")
    if table.get("config", "lean") not in kconfig.VARIANTS:
        raise ValueError(f"{script}.toml: {table.get('name')}: config "
                         f"{table['config']!r} is no variant of "
                         f"configs/ ({', '.join(kconfig.VARIANTS)})")
    boots = []
    for _ in range(table.get("boots", 1)):
        if "base_variants" in table:
            boots.append((True, table["base_variants"]))
        boots.append((False, table["variants"]))
    pressure = table.get("pressure")
    return Scenario(
        table["name"], table["title"], boots, table["rounds"],
        [tuple(m) for m in table["metrics"]],
        [_target(t) for t in table.get("target", [])], table["what"],
        script, cpus=table.get("cpus", 2), icount=table.get("icount", False),
        fits=[Fit(f["key"], f["metric"], f["covariate"], f["reference"])
              for f in table.get("fit", [])],
        pressure=pressure and PressureRule(pressure["metric"],
                                           pressure["minimum"],
                                           tuple(pressure.get("exempt",
                                                              ()))),
        trace_events=table.get("trace_events", ()),
        config=table.get("config"))


def load_all(directory):
    """{name: Scenario} from every SCRIPT.toml in `directory`, in the
    order of the file names and, within a file, of its tables."""
    scenarios = {}
    for entry in sorted(os.listdir(directory)):
        script, ext = os.path.splitext(entry)
        if ext != ".toml":
            continue
        with open(os.path.join(directory, entry), "rb") as f:
            for table in tomllib.load(f).get("scenario", []):
                s = _scenario(table, script)
                if s.name in scenarios:
                    raise ValueError(f"{entry}: scenario {s.name} declared "
                                     "twice")
                scenarios[s.name] = s
    return scenarios
