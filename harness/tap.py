"""Parse kselftest TAP output (run_kselftest.sh) into per-test results.

Each test program is one result under its own name; the TAP a program
prints itself, nested behind "# ", gives one result per subtest, named
"program:subtest".  Results are 'pass', 'fail' or 'skip'."""

import re
import time

_RESULT = re.compile(r"^(not ok|ok)\s+\d+\s*(.*)$")
_PLAN = re.compile(r"^\s*1\.\.(\d+)")
_SUBTEST = re.compile(r"^\s*# Subtest: (\S+)")
_KTAP_RESULT = re.compile(r"^(\s*)(not ok|ok)\s+\d+\s*(.*)$")
_PROGRAM = re.compile(r"^selftests:\s*\S+:\s*(\S+)")
_LEADING_DIRECTIVE = re.compile(r"#\s*(SKIP|XFAIL)\b\s*(.*)$", re.I)


def _classify(status, rest):
    """(result, description) of a result line, from the text after its
    number.  ksft_test_result_skip() prints "ok 3 # SKIP name"; the runner
    prints "ok 2 selftests: cgroup: name # SKIP" or "... # exit=1"."""
    m = _LEADING_DIRECTIVE.match(rest)
    if m:
        directive, desc = m.group(1), m.group(2)
    else:
        desc, _, directive = rest.partition(" #")
    if directive.strip().upper().startswith("SKIP"):
        return "skip", desc.strip()
    return ("pass" if status == "ok" else "fail"), desc.strip()


def _count_plan(plans, name, line):
    """Note in PLANS[name] a subtest result or the plan "1..N" that LINE
    is.  The plan alone lists a program's subtests (no baseline or
    manifest does), so it is what shows a program cut short."""
    planned, ran = plans.get(name, (None, 0))
    m = _PLAN.match(line)
    if m:
        plans[name] = (int(m.group(1)), ran)
    elif _KTAP_RESULT.match(line):
        plans[name] = (planned, ran + 1)


def parse(text, plans=None, notes=None):
    """Return an ordered dict of test name -> result.

    A program with no result line of its own (the guest died while it ran)
    keeps the subtest results it printed and is itself left out, so the
    baseline comparison reports it as missing.  When PLANS is a dict, it
    gets (N of its plan "1..N" or None, number of subtest results) for
    each program.  When NOTES is a dict, it gets for each result the lines
    the program printed since its previous result (a failure's reason).
    A subtest printed twice is counted once, and a failure either time
    stands: a test that forks without flushing stdout has each child print
    its parent's pending output again, ahead of what the child says
    itself, and test_stress.sh runs test_core's subtests twice, plain and
    then under stress, each run with its plan."""
    results = {}
    plans = {} if plans is None else plans
    notes = {} if notes is None else notes
    program = None
    said = []
    for raw in text.splitlines():
        line = raw.rstrip()
        if line.startswith("# "):
            inner = line[2:].strip()
            m = _PROGRAM.match(inner)
            if m:
                program = m.group(1)
                plans[program] = (None, 0)
                said = []
                continue
            if not program:
                continue
            m = _RESULT.match(inner)
            if m:
                result, desc = _classify(m.group(1), m.group(2))
                name = f"{program}:{desc}"
                if desc and name in results:
                    if result == "fail" and results[name] != "fail":
                        results[name], notes[name] = result, said
                    # A forked child's copy of its parent's pending output
                    # says again what the parent said before this result.
                    said = [s for s in said if s not in notes[name]]
                    continue
            _count_plan(plans, program, inner)
            if m:
                if desc:
                    results[name] = result
                    notes[name] = said
                said = []
            elif not _PLAN.match(inner):
                said.append(inner)
            continue
        m = _RESULT.match(line.strip())
        if not m:
            continue
        result, desc = _classify(m.group(1), m.group(2))
        pm = _PROGRAM.match(desc)
        name = pm.group(1) if pm else desc
        results[name] = result
        notes[name] = said
        program = None
        said = []
    return results


def counts(results):
    """(passed, failed, skipped) over a results dict."""
    values = list(results.values())
    return (values.count("pass"), values.count("fail"), values.count("skip"))


def parse_kunit(messages, plans=None):
    """Results of built-in KUnit suites from kernel log messages (KTAP, with
    printk timestamps already stripped): "kunit:suite" for each suite and
    "kunit:suite:case" for each of its cases; PLANS as in parse(), for
    "kunit:suite"."""
    results = {}
    plans = {} if plans is None else plans
    suite = None
    for msg in messages:
        m = _SUBTEST.match(msg)
        if m:
            suite = m.group(1)
            plans[f"kunit:{suite}"] = (None, 0)
            continue
        if suite is not None and msg[:1].isspace():
            _count_plan(plans, f"kunit:{suite}", msg)
        m = _KTAP_RESULT.match(msg)
        if not m or suite is None:
            continue
        result, desc = _classify(m.group(2), m.group(3))
        if m.group(1):
            results[f"kunit:{suite}:{desc}"] = result
        else:
            results[f"kunit:{desc}"] = result
            suite = None
    return results


def plain_name(name):
    """The name of a result without its variant: a program run once more
    under a variant is named PROGRAM@VARIANT ("test_memcontrol@auto")."""
    program, sep, rest = name.partition(":")
    return program.split("@")[0] + sep + rest


class LiveReport:
    """Follows the guest's TAP line by line and says, for a person watching
    the run, which program is running and how each program and each failing
    subtest ended, marking the failures the base has too.  The raw TAP is
    kept in the run directory."""

    def __init__(self, expected, clock=time.monotonic):
        self.expected = expected    # baseline: name -> (result, reason)
        self.clock = clock
        self.program = None
        self.started = None

    def _verdict(self, name, result):
        if result != "fail":
            return f"{name}: {result}"
        was = self.expected.get(name,
                                self.expected.get(plain_name(name), ("",)))[0]
        if was in ("fail", "flaky"):
            return f"{name}: fail, as on the base ({was} there)"
        if was:
            return f"{name}: FAILED ({was} on the base)"
        return f"{name}: FAILED (new test)"

    def line(self, raw):
        """The progress line for one line of guest output, or None."""
        line = raw.rstrip()
        if line.startswith("# "):
            inner = line[2:].strip()
            m = _PROGRAM.match(inner)
            if m:
                self.program = m.group(1)
                self.started = self.clock()
                return f"running {self.program}"
            m = _RESULT.match(inner)
            if m and self.program:
                result, desc = _classify(m.group(1), m.group(2))
                if result == "fail" and desc:
                    return "  " + self._verdict(f"{self.program}:{desc}",
                                                result)
            return None
        m = _RESULT.match(line.strip())
        if not m:
            return None
        result, desc = _classify(m.group(1), m.group(2))
        pm = _PROGRAM.match(desc)
        verdict = self._verdict(pm.group(1) if pm else desc, result)
        if self.program and self.started is not None:
            verdict += f" [{self.clock() - self.started:.0f}s]"
        self.program = None
        return verdict
