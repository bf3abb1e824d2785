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


def parse_manifest(text, profiles):
    """Parse 'name profile[,profile...] [plan|may-skip]' lines into {name:
    (profiles, kind)}: what a kernel with the series must produce under
    each of PROFILES, and its kind: "plan" when the program prints a TAP
    plan, "may-skip" when a skip only says that the run gave the test
    nothing to check, "" otherwise."""
    entries = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        fields = line.split()
        names = fields[1].split(",") if len(fields) > 1 else []
        if (len(fields) not in (2, 3)
                or fields[2:] not in ([], ["plan"], ["may-skip"])
                or not set(names) <= set(profiles)):
            raise ValueError(f"manifest line {lineno}: expected 'name "
                             f"{'|'.join(profiles)}[,...] [plan|may-skip]'"
                             f": {line}")
        if fields[0] in entries:
            raise ValueError(f"manifest line {lineno}: {fields[0]} repeated")
        entries[fields[0]] = (tuple(names), fields[2] if fields[2:] else "")
    return entries


@dataclass
class Comparison:
    regressions: list = field(default_factory=list)   # (name, was, now)
    new_failures: list = field(default_factory=list)  # not in baseline
    known_failures: list = field(default_factory=list)
    flaky_failures: list = field(default_factory=list)
    newly_passing: list = field(default_factory=list)
    new_tests: list = field(default_factory=list)
    absent: list = field(default_factory=list)     # (name, now): manifest
    allowed_skips: list = field(default_factory=list)  # manifest may-skip
    truncated: list = field(default_factory=list)  # (name, what is wrong)
    expected: dict = field(default_factory=dict)  # baseline with variants

    def failing(self):
        """The names of the tests that fail the run."""
        return {entry[0] for entries in (self.regressions, self.new_failures,
                                         self.absent, self.truncated)
                for entry in entries}

    @property
    def ok(self):
        return not self.failing()


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


def check_plans(manifest, plans):
    """(program, what is wrong) for each program whose subtest results do
    not match its TAP plan "1..N", and each one the MANIFEST says prints a
    plan that printed none: a program cut short by a crash or a timeout
    has passed every subtest it got to, and only its plan tells that more
    were due (test_bgreclaim's subtests are listed nowhere else).  A
    program that never started is missing, not truncated."""
    wrong = [(name, "no TAP plan (1..N)") for name, kind in manifest.items()
             if kind == "plan" and name in plans and plans[name][0] is None]
    for name, (planned, ran) in plans.items():
        if planned is not None and ran != planned:
            wrong.append((name, f"{ran} results, its TAP plan says "
                                f"1..{planned}"))
    return wrong


def compare(baseline, results, manifest=None, plans=None):
    """Compare {name: result} against a parsed baseline.

    A test the base runs must run: one that is missing now, or skips when
    it did not skip on the base, is a regression, and so is a failure of a
    test that passed or skipped there; a flaky one may pass or fail.  A test
    not in the baseline was written for this series and this VM: it must
    pass, and a skip there would hide a failure.  Variant runs are judged
    by with_variants().  Each test of the MANIFEST ({name: kind}, as
    parse_manifest() gives it) that is missing, or skipped without being
    marked may-skip, fails the run, and so does each program of PLANS
    ({program: (planned, ran)}, from tap.parse()) cut short: see
    check_plans()."""
    cmp = Comparison()
    manifest = manifest or {}
    for name, kind in manifest.items():
        now = results.get(name, "missing")
        if now == "skip" and kind == "may-skip":
            cmp.allowed_skips.append(name)
        elif now in ("missing", "skip"):
            cmp.absent.append((name, now))
    cmp.truncated = check_plans(manifest, plans or {})
    absent = {name for name, _ in cmp.absent}
    baseline = with_variants(baseline, results)
    for name, (was, _) in baseline.items():
        now = results.get(name, "missing")
        if name in absent:
            continue
        if now == "fail" and was == "fail":
            cmp.known_failures.append(name)
        elif now == "fail" and was == "flaky":
            cmp.flaky_failures.append((name, now))
        elif now == "pass":
            if was in ("fail", "skip"):
                cmp.newly_passing.append(name)
        elif now != was:
            cmp.regressions.append((name, was, now))
    for name, now in results.items():
        if name in baseline:
            continue
        cmp.new_tests.append((name, now))
        if now != "pass" and name not in absent \
                and name not in cmp.allowed_skips:
            cmp.new_failures.append((name, now))
    cmp.expected = baseline
    return cmp


# How many of its last lines a failure's report quotes.
WHY_LINES = 8


def report(cmp, notes=None):
    """Informational lines first and failures last, so that the tail of
    a log, which is what CI shows, names what went wrong and, from NOTES
    (tap.parse()'s), what the failing test said just before it failed."""
    baseline = cmp.expected
    notes = notes or {}
    lines = []

    def why(name):
        for said in notes.get(name, [])[-WHY_LINES:]:
            lines.append(f"    | {said}")

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
        why(name)
    for name, was, now in cmp.regressions:
        lines.append(f"REGRESSION: {name}: {was} on the base, {now} now")
        why(name)
    for name, now in cmp.absent:
        lines.append(f"MISSING (the series must produce it): {name}"
                     if now == "missing" else
                     f"SKIPPED (the series must run it): {name}")
    for name in cmp.allowed_skips:
        lines.append(f"skipped, as it may be: {name}")
        why(name)
    for name, wrong in cmp.truncated:
        lines.append(f"TRUNCATED: {name}: {wrong}")
    return "\n".join(lines)
