"""The committed per-test baseline of the unpatched base kernel, and the
comparison of a run against it."""

from dataclasses import dataclass, field

from . import tap

# "flaky": seen both passing and failing on the base; either is accepted.
RESULTS = ("pass", "fail", "skip", "flaky")


def parse(text):
    """Parse 'name result [reason...]' lines into {name: (result, reason)}."""
    entries = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        fields = line.split(None, 2)
        if len(fields) < 2 or fields[1] not in RESULTS:
            raise ValueError(f"baseline line {lineno}: expected "
                             f"'name {'|'.join(RESULTS)} [reason]': {line}")
        if fields[0] in entries:
            raise ValueError(f"baseline line {lineno}: {fields[0]} repeated")
        entries[fields[0]] = (fields[1], fields[2] if len(fields) > 2 else "")
    return entries


def render(results, reasons, header):
    """Baseline text for a run, keeping the reasons already investigated."""
    lines = [f"# {h}" if h else "#" for h in header]
    width = max((len(n) for n in results), default=0)
    for name, result in results.items():
        reason = reasons.get(name, "")
        lines.append(f"{name:<{width}} {result:<4} {reason}".rstrip())
    return "\n".join(lines) + "\n"


@dataclass
class Comparison:
    regressions: list = field(default_factory=list)   # (name, was, now)
    new_failures: list = field(default_factory=list)  # not in baseline
    known_failures: list = field(default_factory=list)
    flaky_failures: list = field(default_factory=list)
    newly_passing: list = field(default_factory=list)
    new_tests: list = field(default_factory=list)
    expected: dict = field(default_factory=dict)  # baseline with variants

    @property
    def ok(self):
        return not self.regressions and not self.new_failures


def with_variants(baseline, results):
    """The baseline extended to the programs that ran once more under a
    variant, named PROGRAM@VARIANT ("test_memcontrol@auto"): each is
    expected to do what PROGRAM does on the base, unless the baseline has
    an entry of its own for the variant's test (with the reason).  Such
    entries count only when the variant ran."""
    variants = {name.split(":")[0] for name in results
                if "@" in name.split(":")[0]}
    extended = {name: entry for name, entry in baseline.items()
                if "@" not in name.split(":")[0]}
    for variant in variants:
        program = tap.plain_name(variant)
        for name, entry in list(extended.items()):
            head, sep, rest = name.partition(":")
            if head == program:
                own = variant + sep + rest
                extended[own] = baseline.get(own, entry)
    return extended


def compare(baseline, results):
    """Compare {name: result} against a parsed baseline.

    A test that passed on the base and now fails, skips or is missing is a
    regression; a flaky one may pass or fail.  A test not in the baseline
    was written for this series and this VM: it must pass, and a skip there
    would hide a failure.  Variant runs are judged by with_variants()."""
    cmp = Comparison()
    baseline = with_variants(baseline, results)
    for name, (was, _) in baseline.items():
        now = results.get(name, "missing")
        if was == "flaky":
            if now != "pass":
                cmp.flaky_failures.append((name, now))
        elif was == "pass" and now != "pass":
            cmp.regressions.append((name, was, now))
        elif was != "pass" and now == "pass":
            cmp.newly_passing.append(name)
        elif was == "fail" and now == "fail":
            cmp.known_failures.append(name)
    for name, now in results.items():
        if name in baseline:
            continue
        cmp.new_tests.append((name, now))
        if now != "pass":
            cmp.new_failures.append((name, now))
    cmp.expected = baseline
    return cmp


def report(cmp):
    """Informational lines first and failures last, so that the tail of
    a log, which is what CI shows, names what went wrong."""
    baseline = cmp.expected
    lines = []
    for name, now in cmp.new_tests:
        lines.append(f"new test (not in the baseline): {name}: {now}")
    for name in cmp.known_failures:
        lines.append(f"known failure on the base too: {name}: "
                     f"{baseline[name][1] or 'no reason recorded'}")
    for name, now in cmp.flaky_failures:
        lines.append(f"flaky on the base, {now} this time: {name}: "
                     f"{baseline[name][1] or 'no reason recorded'}")
    for name in cmp.newly_passing:
        lines.append(f"newly passing: {name} (baseline says "
                     f"{baseline[name][0]}; update the baseline?)")
    for name, now in cmp.new_failures:
        lines.append(f"FAILED (not in the baseline, so it must pass): "
                     f"{name}: {now}")
    for name, was, now in cmp.regressions:
        lines.append(f"REGRESSION: {name}: {was} on the base, {now} now")
    return "\n".join(lines)
