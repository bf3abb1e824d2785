"""Statistics that settle a benchmark's verdicts.

A target compares two variants measured in the same run as a ratio of
their medians.  With a handful of trials per variant the ratio of two
medians is itself noisy, so the verdict is read from a bootstrap 95%
confidence interval of that ratio, not from the point estimate: met when
the whole interval satisfies the target, missed when none of it does,
and inconclusive otherwise.  Resampling uses a fixed seed, so a report
rewritten from the same trials gives the same intervals."""

import random
import statistics

RESAMPLES = 4000
CONFIDENCE = 0.95
SEED = 20260101
# Trials each variant needs before a ratio gets an interval and a verdict.
MIN_TRIALS = 2

MET, MISSED, INCONCLUSIVE = "met", "MISSED", "inconclusive"


def _quantile(ordered, q):
    """Linear-interpolation quantile of a sorted, non-empty list."""
    pos = q * (len(ordered) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    if ordered[lo] == ordered[hi]:
        return ordered[lo]
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def ratio_interval(mine, ref, resamples=RESAMPLES, seed=SEED):
    """(ratio of medians, lower, upper): the bootstrap percentile interval
    of median(mine) / median(ref), each resampled with replacement on its
    own.  A resample whose reference median is 0 gives an infinite ratio
    (0 when its own median is 0 too).  None if the reference's median is
    0, where no ratio exists."""
    if not mine or not ref:
        raise ValueError("both samples need at least one value")
    ref_median = statistics.median(ref)
    if ref_median == 0:
        return None
    rng = random.Random(seed)
    ratios = []
    for _ in range(resamples):
        a = statistics.median(rng.choices(mine, k=len(mine)))
        b = statistics.median(rng.choices(ref, k=len(ref)))
        ratios.append(a / b if b else (float("inf") if a else 0.0))
    ratios.sort()
    tail = (1 - CONFIDENCE) / 2
    return (statistics.median(mine) / ref_median,
            _quantile(ratios, tail), _quantile(ratios, 1 - tail))


def paired_ratio_interval(pairs, resamples=RESAMPLES, seed=SEED):
    """(median ratio, lower, upper) of (mine, ref) pairs measured in the
    same round: the median of mine / ref over the pairs, with the
    bootstrap percentile interval from resampling whole pairs.  Pairing
    cancels what a round shares, such as how fast the host ran the guest
    then.  Pairs whose ref is 0 have no ratio and are left out; None if
    no pair is left."""
    ratios = [m / r for m, r in pairs if r]
    if not ratios:
        return None
    rng = random.Random(seed)
    medians = sorted(statistics.median(rng.choices(ratios, k=len(ratios)))
                     for _ in range(resamples))
    tail = (1 - CONFIDENCE) / 2
    return (statistics.median(ratios), _quantile(medians, tail),
            _quantile(medians, 1 - tail))


def round_pairs(trials, metric, variant, reference):
    """(variant's, reference's) `metric` from each boot and round in which
    both were measured, in the order the trials list the rounds."""
    by_round = {}
    for t in trials:
        if t["variant"] in (variant, reference) and metric in t:
            key = (t.get("boot"), t.get("round"))
            by_round.setdefault(key, {})[t["variant"]] = t[metric]
    return [(r[variant], r[reference]) for r in by_round.values()
            if variant in r and reference in r]


def verdict(lower, upper, factor, at_most=True):
    """met, MISSED or inconclusive for "the ratio is at most (or at least)
    factor", given the ratio's confidence interval [lower, upper]."""
    if at_most:
        if upper <= factor:
            return MET
        return MISSED if lower > factor else INCONCLUSIVE
    if lower >= factor:
        return MET
    return MISSED if upper < factor else INCONCLUSIVE


class PressureRule:
    """Which trials count, fixed with the scenario before it runs: a
    trial of a variant under pressure counts only if its `metric` reached
    `minimum`; a trial that never met its limit cannot tell whether a
    reclaimer relieved it.  Variants in `exempt` (no limit) always count."""

    def __init__(self, metric, minimum, exempt=()):
        self.metric, self.minimum, self.exempt = metric, minimum, exempt

    def text(self):
        exempt = (f" (not applied to {', '.join(self.exempt)}: no limit)"
                  if self.exempt else "")
        return (f"a trial counts only if its {self.metric} reached "
                f"{self.minimum}{exempt}")

    def split(self, trials):
        """(kept, rejected): a trial missing the metric is rejected."""
        kept, rejected = [], []
        for t in trials:
            ok = (t["variant"] in self.exempt
                  or t.get(self.metric, self.minimum - 1) >= self.minimum)
            (kept if ok else rejected).append(t)
        return kept, rejected


def rejected_text(rejected, total):
    """What a PressureRule rejected, for the report."""
    if not rejected:
        return f"none of the {total} trials was rejected."
    by_variant = {}
    for t in rejected:
        by_variant[t["variant"]] = by_variant.get(t["variant"], 0) + 1
    return (f"{len(rejected)} of the {total} trials rejected ("
            + ", ".join(f"{v} {n}" for v, n in by_variant.items()) + ").")
