#!/usr/bin/env python3
"""Fuzz memory.reclaim_wmarks, and memory.reclaim_wmarks.budget where the
kernel has it (the 6.12 backport), in the guest against reference
grammars.

usage: fuzz_wmarks.py CGROUP_DIR COUNT SEED

Writes COUNT random and adversarial inputs to each file (huge numbers,
negative values, percent overflow, 100.001%, empty, whitespace, NUL bytes,
very long writes, repeated and unknown keys, partial writes; for the
budget, values and periods around their bounds) with write(2).  Each input the
reference parser below rejects must fail with EINVAL and leave what the
file reads back unchanged; each it accepts must succeed and read back in
canonical form.  Two kinds of write never reach the file's handler, as for
every cgroup file: an empty one (the cgroup core returns 0) and one longer
than a page (E2BIG); the configuration must stay unchanged by them too.  Nothing may appear in the kernel log at warning level or
above meanwhile.  Prints a summary line; exits 1 on the first mismatch.
"""

import errno
import os
import random
import re
import subprocess
import sys

U64_MAX = (1 << 64) - 1
# The cgroup core refuses longer writes (E2BIG) before the handler runs.
WRITE_MAX = 4096
SUFFIX = {"": 0, "k": 10, "m": 20, "g": 30, "t": 40}
PERCENT = re.compile(r"([0-9]+)(?:\.([0-9]{1,2}))?%")
DIGITS = re.compile(r"[0-9]+")
# memory.reclaim_wmarks.budget, in microseconds.
PERIOD_MIN, PERIOD_MAX, BUDGET_MIN = 1000, 1000000, 1000
BYTES = re.compile(r"([0-9]+)([KMGTkmgt]?)")


def parse_value(text):
    """('pct', hundredths) or ('bytes', n), or None when invalid."""
    # fullmatch: "$" would also match before a trailing newline.
    m = PERCENT.fullmatch(text)
    if m:
        whole = int(m.group(1))
        frac = (m.group(2) or "").ljust(2, "0")
        if whole > 100:
            return None
        val = whole * 100 + int(frac or 0)
        return ("pct", val) if 0 < val <= 10000 else None
    m = BYTES.fullmatch(text)
    if m:
        num = int(m.group(1))
        if num > U64_MAX:
            return None
        val = num << SUFFIX[m.group(2).lower()]
        return ("bytes", val) if val <= U64_MAX else None
    return None


def fmt_pct(val):
    whole, frac = divmod(val, 100)
    if not frac:
        return f"{whole}%"
    if frac % 10 == 0:
        return f"{whole}.{frac // 10}%"
    return f"{whole}.{frac:02d}%"


def reference(data, before):
    """What memory.reclaim_wmarks should read back after `data` is
    written, or None when the write must fail with EINVAL."""
    if data.endswith(b"\n"):
        data = data[:-1]
    if not data or b"\0" in data:
        return None
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        return None
    if text in ("off", "auto"):
        return text
    parts = text.split(" ")
    if len(parts) != 2:
        return None
    values = {}
    for part in parts:
        key, eq, val = part.partition("=")
        if not eq or key not in ("high", "low") or key in values:
            return None
        parsed = parse_value(val)
        if parsed is None:
            return None
        values[key] = parsed
    (hkind, high), (lkind, low) = values["high"], values["low"]
    if hkind != lkind or low >= high:
        return None
    if hkind == "pct":
        return f"high={fmt_pct(high)} low={fmt_pct(low)}"
    return f"high={high} low={low}"


def budget_reference(data, before):
    """The same for memory.reclaim_wmarks.budget, which reads `before`:
    "$BUDGET $PERIOD" or "$BUDGET" (keeping the period), $BUDGET "max"
    or at least 1000 us (and no more in ns than a u64 holds), $PERIOD
    1000 to 1000000 us."""
    if data.endswith(b"\n"):
        data = data[:-1]
    try:
        parts = data.decode("ascii").split(" ")
    except UnicodeDecodeError:
        return None
    if len(parts) > 2:
        return None
    budget = parts[0]
    period = parts[1] if len(parts) == 2 else before.split(" ")[1]
    if not DIGITS.fullmatch(period) or not (
            PERIOD_MIN <= int(period) <= PERIOD_MAX):
        return None
    if budget == "max":
        return f"max {int(period)}"
    if not DIGITS.fullmatch(budget) or not (
            BUDGET_MIN <= int(budget) <= U64_MAX // 1000):
        return None
    return f"{int(budget)} {int(period)}"


def number(rng):
    return rng.choice([
        str(rng.randrange(0, 1 << 12)),
        str(rng.randrange(0, 1 << 70)),
        str(U64_MAX), str(U64_MAX + 1), str(U64_MAX >> 10),
        str((U64_MAX >> 40) + 1), "0" * rng.randrange(1, 30) + "7",
        "-" + str(rng.randrange(1, 1000)), "+5", "0x10", "1e3", "",
    ])


def value(rng):
    pct = rng.random() < 0.5
    if pct:
        whole = rng.choice([str(rng.randrange(0, 102)), "100", "0", "101",
                            "1000", number(rng)])
        frac = rng.choice(["", "", "." + str(rng.randrange(0, 100)),
                           ".5", ".001", ".", ".00", ".99", ".123"])
        return whole + frac + rng.choice(["%", "%", "%", "%%", "", " %"])
    return number(rng) + rng.choice(["", "", "K", "M", "G", "T", "k", "m",
                                     "g", "t", "P", "KB", "B", " "])


def well_formed(rng, keys):
    """Two values of one kind, usually low below high, at the edges."""
    if rng.random() < 0.5:
        a, b = (rng.choice([rng.randrange(1, 10001), 1, 10000, 9999, 5000])
                for _ in range(2))
        vals = {"high": fmt_pct(max(a, b)), "low": fmt_pct(min(a, b))}
        if rng.random() < 0.3:
            vals = {k: v.replace("%", "0%") if "." in v and len(
                v.split(".")[1]) == 2 else v for k, v in vals.items()}
    else:
        suffix = rng.choice(["", "", "K", "M", "G", "T"])
        top = U64_MAX >> SUFFIX[suffix.lower()]
        a, b = (rng.choice([rng.randrange(0, 1 << 40), 0, 1, top, top - 1,
                            rng.randrange(0, top + 1)]) for _ in range(2))
        vals = {"high": f"{max(a, b)}{suffix}", "low": f"{min(a, b)}{suffix}"}
    text = " ".join(f"{k}={vals[k]}" for k in keys)
    return (text + rng.choice(["", "\n"])).encode()


def random_bytes(rng, longest):
    return bytes(rng.randrange(256) for _ in range(rng.randrange(0, longest)))


def candidate(rng):
    """One input: mostly near the grammar, sometimes far from it."""
    kind = rng.randrange(10)
    if kind == 0:
        return random_bytes(rng, 40)
    if kind == 1:
        return rng.choice([b"", b"\n", b" ", b"\t", b"off ", b" off",
                           b"auto\n\n", b"OFF", b"off\0", b"a" * 5000,
                           b"high=" + b"9" * 5000 + b" low=1",
                           b"high=50%", b" low=40%", b"high=50%  low=40%",
                           b"high=50%\tlow=40%", b"high=100.001% low=1%",
                           b"high=95% low=93.5%", b"high=1G low=1G",
                           b"\0high=2 low=1", b"high=2 low=1\0"])
    keys = ["high", "low"]
    rng.shuffle(keys)
    if kind <= 4:
        return well_formed(rng, keys)
    if kind == 5:
        keys = rng.choice([["high", "high"], ["low", "low"], ["high"],
                           ["high", "low", "low"], ["hi", "low"],
                           ["high", "LOW"], ["high", "min"]])
    sep = rng.choice([" "] * 8 + ["  ", "\t", ",", ""])
    text = sep.join(f"{k}={value(rng)}" for k in keys)
    text += rng.choice([""] * 6 + ["\n", "\n\n", " ", "x"])
    return text.encode()


def budget_candidate(rng):
    """One input for the budget file, mostly around its bounds."""
    kind = rng.randrange(8)
    if kind == 0:
        return random_bytes(rng, 30)
    if kind == 1:
        return rng.choice([b"", b"\n", b" ", b"max", b"max\n", b"MAX",
                           b"max max", b"max  100000", b" max", b"max ",
                           b"10000\t100000", b"10000 100000\n\n",
                           b"10000\0 100000", b"1" * 5000, b"-1 100000",
                           b"1e4 100000", b"10ms 100ms"])

    def num():
        return rng.choice([
            str(rng.randrange(0, 2000000)), "max", "999", "1000", "1001",
            "999999", "1000000", "1000001", "0", "0001000",
            str(U64_MAX // 1000), str(U64_MAX // 1000 + 1), str(U64_MAX),
            number(rng)])
    text = num() if kind == 2 else num() + rng.choice(
        [" "] * 8 + ["  ", "\t", ""]) + num()
    text += rng.choice([""] * 6 + ["\n", " ", "x"])
    return text.encode()


# The files fuzzed, with their reference parsers and input generators, and
# whether a kernel may lack the file: the budget is in the 6.12 backport's
# series only.
FILES = [("memory.reclaim_wmarks", reference, candidate, False),
         ("memory.reclaim_wmarks.budget", budget_reference,
          budget_candidate, True)]


def read_back(path):
    with open(path, encoding="ascii") as f:
        return f.read().rstrip("\n")


def write(path, data):
    """0 on success, else the errno of the write."""
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, data)
        return 0
    except OSError as err:
        return err.errno
    finally:
        os.close(fd)


# Warnings about the machine's timing, not about anything written: under
# TCG on a loaded host a timer interrupt can take milliseconds.
TIMING_NOISE = re.compile(r"hrtimer: interrupt took \d+ ns")


def loud_kernel_lines():
    """Kernel log lines at warning level or above."""
    res = subprocess.run(["dmesg", "--level=emerg,alert,crit,err,warn"],
                         capture_output=True, text=True, check=True)
    return res.stdout.splitlines()


def fuzz_file(path, ref, gen, count, rng):
    """Write `count` inputs from `gen`; None, or the first mismatch."""
    accepted = rejected = too_long = 0
    for i in range(count):
        data = gen(rng)
        before = read_back(path)
        want = ref(data, before) if len(data) <= WRITE_MAX else None
        err = write(path, data)
        after = read_back(path)
        if not data:
            ok = err == 0 and after == before
            rejected += 1
        elif len(data) > WRITE_MAX:
            ok = err == errno.E2BIG and after == before
            too_long += 1
        elif want is None:
            ok = err == errno.EINVAL and after == before
            rejected += 1
        else:
            ok = err == 0 and after == want
            accepted += 1
        if not ok:
            return (f"fuzz: MISMATCH in {os.path.basename(path)} at input "
                    f"{i}: {data[:200]!r}: errno {err}, read back "
                    f"{after!r} (before {before!r}), expected {want!r}")
    print(f"fuzz: {os.path.basename(path)}: {count} inputs: {accepted} "
          f"accepted, {rejected} rejected (EINVAL, or ignored when empty) "
          f"and {too_long} longer than a page refused with E2BIG, the "
          "configuration unchanged by each")
    return None


def main(argv):
    sys.set_int_max_str_digits(0)   # numbers may be a page long
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    cgroup, count, seed = argv[1], int(argv[2]), int(argv[3])
    rng = random.Random(seed)
    loud_before = len(loud_kernel_lines())
    fuzzed = 0
    for name, ref, gen, optional in FILES:
        path = os.path.join(cgroup, name)
        if optional and not os.path.exists(path):
            print(f"fuzz: {name}: not in this kernel")
            continue
        problem = fuzz_file(path, ref, gen, count, rng)
        if problem:
            print(problem)
            return 1
        fuzzed += 1
    loud = loud_kernel_lines()[loud_before:]
    for line in [line for line in loud if TIMING_NOISE.search(line)]:
        print(f"fuzz: ignored, emulator timing: {line}")
        loud.remove(line)
    if loud:
        print("fuzz: the kernel logged at warning level or above:")
        print("\n".join(loud))
        return 1
    print(f"fuzz: {count * fuzzed} inputs in all (seed {seed})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
