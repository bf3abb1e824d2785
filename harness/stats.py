"""Statistics that settle a benchmark's verdicts.

A target compares two variants measured in the same run as a ratio of
their medians.  With a handful of trials per variant the ratio of two
medians is itself noisy, so the verdict is read from a bootstrap 95%
confidence interval of that ratio, not from the point estimate: met when
the whole interval satisfies the target, missed when none of it does,
and inconclusive otherwise.  The interval resamples boots, then rounds
(hierarchical_ratio_interval); until 2026-11-29 each variant's trials
were resampled on their own (ratio_interval), which reports keep beside
the verdict.  The intervals of latencies pooled over all
requests (pooled_intervals) are context beside the verdicts, not
verdicts.  Resampling uses a fixed seed, so a report rewritten from the
same trials gives the same intervals."""

import bisect
import itertools
import math
import random
import statistics

from .trials import percentile, rank

RESAMPLES = 4000
# The pooled latencies' context intervals draw every trial's requests in
# each resample: fewer resamples than the verdicts'.
POOLED_RESAMPLES = 1000
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
    ratios = [_ratio(statistics.median(rng.choices(mine, k=len(mine))),
                     statistics.median(rng.choices(ref, k=len(ref))))
              for _ in range(resamples)]
    return _interval(statistics.median(mine) / ref_median, ratios)


def _ratio(a, b):
    """a / b, infinite where b is 0 (0 if a is 0 too)."""
    return a / b if b else (float("inf") if a else 0.0)


def _interval(estimate, resampled):
    """(estimate, lower, upper): the bootstrap percentile interval."""
    ordered = sorted(resampled)
    tail = (1 - CONFIDENCE) / 2
    return (estimate, _quantile(ordered, tail),
            _quantile(ordered, 1 - tail))


def _resampled_rounds(rng, boots):
    """The rounds of one hierarchical resample of `boots`, each a list of
    its rounds: boots drawn with replacement, then rounds within each
    drawn boot."""
    for rounds in rng.choices(boots, k=len(boots)):
        yield from rng.choices(rounds, k=len(rounds))


def hierarchical_ratio_interval(trials, metric, variant, reference,
                                resamples=RESAMPLES, seed=SEED):
    """(ratio of medians, lower, upper) of `variant`'s `metric` over
    `reference`'s in `trials`, with a hierarchical bootstrap percentile
    interval: boots resampled, then rounds within each drawn boot, a
    drawn round's trials of both variants together, as they ran.  What
    one boot or round does to both variants (how fast the host ran the
    guest then) stays paired, and what a boot does to one variant's
    effect widens the interval as often as it happened.  A resample that
    draws no trial of a variant is left out.  None if the reference's
    median is 0, where no ratio exists."""
    boots, values = {}, {variant: [], reference: []}
    for t in trials:
        if t["variant"] in values and metric in t:
            values[t["variant"]].append(t[metric])
            boots.setdefault(t.get("boot"), {}).setdefault(
                t.get("round"), []).append((t["variant"], t[metric]))
    if not values[variant] or not values[reference]:
        raise ValueError("both variants need at least one trial")
    ref_median = statistics.median(values[reference])
    if ref_median == 0:
        return None
    boots = [list(rounds.values()) for rounds in boots.values()]
    rng = random.Random(seed)
    ratios = []
    for _ in range(resamples):
        drawn = {variant: [], reference: []}
        for trials_of in _resampled_rounds(rng, boots):
            for v, x in trials_of:
                drawn[v].append(x)
        if drawn[variant] and drawn[reference]:
            ratios.append(_ratio(statistics.median(drawn[variant]),
                                 statistics.median(drawn[reference])))
    return _interval(statistics.median(values[variant]) / ref_median,
                     ratios)


def share_over(values, limit):
    """The fraction of values above limit."""
    return sum(1 for v in values if v > limit) / len(values)


def _binomial(rng, n, p):
    """How many of n draws succeed, each with probability p (> 0):
    geometric skips from one success to the next, so that it costs as
    many steps as there are successes, not n."""
    if p >= 1:
        return n
    log_miss, log, uniform = math.log1p(-p), math.log, rng.random
    hits, pos = 0, int(log(1.0 - uniform()) / log_miss)
    while pos < n:
        hits += 1
        pos += 1 + int(log(1.0 - uniform()) / log_miss)
    return hits


def _pooled_draw(rng, trials, cuts, pct, limit):
    """(pct-th percentile, share over limit) of all the requests of
    `trials` resampled, each trial its sorted values and `ends`, where
    each of the descending `cuts` falls in them.  The draws are placed
    band by band from the top, only as deep as the percentile and limit
    need: a trial's draws not yet placed are uniform over its values
    below the bands placed."""
    n = sum(len(values) for values, _ in trials)
    top = n - rank(n, pct) + 1
    left = [len(values) for values, _ in trials]
    drawn = []
    for band, cut in enumerate(cuts):
        for i, (values, ends) in enumerate(trials):
            lo, hi = ends[band + 1], ends[band]
            if lo < hi and left[i]:
                hits = _binomial(rng, left[i], (hi - lo) / hi)
                drawn += rng.choices(values[lo:hi], k=hits)
                left[i] -= hits
        if len(drawn) >= top and cut <= limit:
            break
    drawn.sort()
    return drawn[-top], (len(drawn) - bisect.bisect_right(drawn, limit)) / n


def pooled_intervals(trials, pairs, pct, limit,
                     resamples=POOLED_RESAMPLES, seed=SEED):
    """{(variant, reference): (ratio, share)} for each pair of `pairs`:
    the ratio of their pct-th percentiles over all their requests pooled,
    and the difference of their shares of requests over `limit`, each as
    (estimate, lower, upper) with a hierarchical bootstrap percentile
    interval: boots resampled, then rounds within each drawn boot, then
    requests within each drawn trial.  The variants' trials of a drawn
    round come together, as they ran, as in hierarchical_ratio_interval.  trials: (boot, round, variant, values).
    A resample that draws no trial of a variant leaves its pairs out;
    ratio is None where the reference's percentile is 0."""
    pooled, cuts, boots = {}, {}, {}
    for _, _, variant, values in trials:
        pooled.setdefault(variant, []).extend(values)
    # Bands of each variant's requests, from the top: above limit, and
    # above twice, four times... pct's share of the requests.
    for variant, values in pooled.items():
        ordered = pooled[variant] = sorted(values)
        found, share = {limit}, 2 * (100 - pct)
        while share < 100:
            found.add(ordered[rank(len(ordered), 100 - share) - 1])
            share *= 2
        cuts[variant] = sorted(found, reverse=True) + [-math.inf]
    for boot, rnd, variant, values in trials:
        ordered = sorted(values)
        ends = [len(ordered)] + [bisect.bisect_right(ordered, cut)
                                 for cut in cuts[variant]]
        boots.setdefault(boot, {}).setdefault(rnd, {})[variant] = (
            ordered, ends)
    boots = [list(rounds.values()) for rounds in boots.values()]
    wanted = set(itertools.chain.from_iterable(pairs))
    rng = random.Random(seed)
    ratios = {pair: [] for pair in pairs}
    shares = {pair: [] for pair in pairs}
    for _ in range(resamples):
        drawn = {}
        for trials_of in _resampled_rounds(rng, boots):
            for variant, trial in trials_of.items():
                if variant in wanted:
                    drawn.setdefault(variant, []).append(trial)
        figures = {v: _pooled_draw(rng, ts, cuts[v], pct, limit)
                   for v, ts in drawn.items()}
        for mine, ref in pairs:
            if mine in figures and ref in figures:
                ratios[mine, ref].append(
                    _ratio(figures[mine][0], figures[ref][0]))
                shares[mine, ref].append(figures[mine][1]
                                         - figures[ref][1])
    out = {}
    for mine, ref in pairs:
        ref_pct = percentile(pooled[ref], pct)
        out[mine, ref] = (
            _interval(percentile(pooled[mine], pct) / ref_pct,
                      ratios[mine, ref]) if ref_pct else None,
            _interval(share_over(pooled[mine], limit)
                      - share_over(pooled[ref], limit), shares[mine, ref]))
    return out


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
