"""Find kernel splats (BUG, WARN, Oops, lockdep, KASAN, hung task, soft
lockup, RCU stall) in a console log or dmesg capture."""

import re

# Kernel messages carry a printk timestamp; guest program output does not,
# so a test printing "WARNING:" is never mistaken for a kernel splat.
_KERNEL_LINE = re.compile(r"\[\s*\d+\.\d+\]\s?(.*)$")

# Most specific first: the first pattern that matches names the splat.
SPLAT_PATTERNS = [
    ("KASAN", re.compile(r"BUG: KASAN: ")),
    ("soft lockup", re.compile(r"BUG: soft lockup")),
    ("hard lockup", re.compile(r"Watchdog detected hard LOCKUP")),
    ("lockdep", re.compile(r"WARNING: (possible (circular|recursive) locking|"
                           r"inconsistent lock state|"
                           r"possible irq lock inversion|"
                           r"bad unlock balance|"
                           r"suspicious RCU usage|"
                           r"lock held when returning)")),
    ("hung task", re.compile(r"INFO: task \S+ blocked for more than")),
    ("RCU stall", re.compile(r"rcu: INFO: .*detected stalls?|"
                             r"self-detected stall")),
    ("workqueue lockup", re.compile(r"BUG: workqueue lockup")),
    ("BUG", re.compile(r"\bBUG: |kernel BUG at ")),
    ("WARNING", re.compile(r"^WARNING: ")),
    ("Oops", re.compile(r"\bOops(: |\[)")),
    ("general protection fault", re.compile(r"general protection fault")),
    ("panic", re.compile(r"Kernel panic - not syncing")),
    ("debugobjects", re.compile(r"^ODEBUG: ")),
    ("UBSAN", re.compile(r"^UBSAN: ")),
]
# A report without a trace shows this many lines; one with a trace runs to
# its last "</TASK>" or end-trace marker (a hung task report names the lock's
# owner, and shows its stack, after the waiter's), within the window.
CONTEXT_LINES = 6
REPORT_WINDOW = 120
_REPORT_END = re.compile(r"^</TASK>|---\[ end trace")


def kernel_messages(text):
    """Yield the message part of every timestamped kernel log line."""
    for line in text.splitlines():
        m = _KERNEL_LINE.search(line)
        if m:
            yield m.group(1).rstrip()


def _kind(msg):
    for kind, pattern in SPLAT_PATTERNS:
        if pattern.search(msg):
            return kind
    return None


def _report_end(messages, start, limit):
    """Where the report starting at messages[start] ends, before limit."""
    end = min(start + CONTEXT_LINES, limit)
    for i in range(start + 1, min(start + REPORT_WINDOW, limit)):
        if _REPORT_END.search(messages[i].strip()):
            end = i + 1
    return end


def find_splats(text):
    """Return a list of (kind, first line, context) for each splat."""
    messages = list(kernel_messages(text))
    starts = [(i, kind) for i, kind in
              ((i, _kind(msg)) for i, msg in enumerate(messages)) if kind]
    splats = []
    for n, (i, kind) in enumerate(starts):
        limit = starts[n + 1][0] if n + 1 < len(starts) else len(messages)
        splats.append((kind, messages[i],
                       messages[i:_report_end(messages, i, limit)]))
    return splats


# What differs between repeats of one splat: the CPU and task it hit.
_REPEAT_NOISE = re.compile(r"CPU: \d+ PID: \d+ |(?<=INFO: task )\S+ ")


def format_splats(splats):
    """Each distinct splat once, in order of first appearance, with its
    context and how often it repeated: a WARN_ON on a hot path must not
    bury the report under thousands of copies."""
    groups = {}
    for kind, first, context in splats:
        key = (kind, _REPEAT_NOISE.sub("", first))
        if key in groups:
            groups[key][2] += 1
        else:
            groups[key] = [first, context, 1]
    out = []
    for (kind, _), (first, context, count) in groups.items():
        times = f" ({count} times)" if count > 1 else ""
        out.append(f"kernel splat ({kind}){times}: {first}")
        out.extend("    " + c for c in context[1:])
    return "\n".join(out)
