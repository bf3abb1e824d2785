"""Kernel configs: fragments in configs/ merged onto tinyconfig, then
checked, because Kconfig silently drops options whose dependencies fail."""

import os
import re

from .common import CONFIGS, HarnessError, log, run

# Each variant is tinyconfig plus LEAN_FRAGMENT, then the base's own
# fragment (base.conf's `fragment`: where the bases' Kconfig differ),
# then the variant's fragments, in order.
LEAN_FRAGMENT = "lean.config"
VARIANTS = {
    "lean": [],
    "debug": ["debug.config"],
    "lockstat": ["lockstat.config"],
}
# Options our patches introduce: merged last, and only onto a tree that has
# the series applied (on the bare base Kconfig would drop them).
SERIES_FRAGMENT = "series.config"

_SET = re.compile(r"^(CONFIG_[A-Za-z0-9_]+)=(.*)$")
_UNSET = re.compile(r"^# (CONFIG_[A-Za-z0-9_]+) is not set$")


def parse_config(text):
    """Map each option named in a .config or fragment to its value;
    `# CONFIG_X is not set` maps to 'n'."""
    values = {}
    for line in text.splitlines():
        line = line.strip()
        m = _SET.match(line)
        if m:
            values[m.group(1)] = m.group(2)
            continue
        m = _UNSET.match(line)
        if m:
            values[m.group(1)] = "n"
    return values


def unmet_options(requested, actual):
    """Options whose requested value did not survive the merge, as
    (option, wanted, got) tuples; a missing option counts as 'n'."""
    return [(opt, want, actual.get(opt, "n"))
            for opt, want in requested.items()
            if actual.get(opt, "n") != want]


def fragment_paths(base, variant, with_series):
    """The fragments of the variant's config on BASE, in merge order."""
    if variant not in VARIANTS:
        raise HarnessError(f"unknown config variant {variant!r}; "
                           f"choose one of {', '.join(VARIANTS)}")
    names = ([LEAN_FRAGMENT, base.fragment] + VARIANTS[variant]
             + ([SERIES_FRAGMENT] if with_series else []))
    return [os.path.join(CONFIGS, name) for name in names]


def requested_options(base, variant, with_series):
    """Options the variant's fragments ask for; later fragments win."""
    requested = {}
    for path in fragment_paths(base, variant, with_series):
        with open(path, encoding="utf-8") as f:
            requested.update(parse_config(f.read()))
    return requested


def defined_symbols(tree):
    """Every CONFIG_ symbol some Kconfig file of the tree defines."""
    res = run(["grep", "-rhoE", "--include=Kconfig*",
               r"^\s*(menu)?config\s+[A-Za-z0-9_]+", tree],
              capture=True, quiet=True)
    return {"CONFIG_" + line.split()[-1] for line in res.stdout.splitlines()}


def make_config(base, tree, out, variant, make_args, with_series,
                partial_series=False):
    """Write out/.config for the variant of BASE, from its kernel tree
    TREE, and verify it.  With partial_series (a commit inside the
    series), options of the series fragment that the tree does not define
    yet are not required."""
    frags = fragment_paths(base, variant, with_series)
    log(f"configuring {variant}: tinyconfig + "
        f"{' + '.join(os.path.basename(p) for p in frags)}")
    run(["make", "-s", "-C", tree, f"O={out}"] + make_args + ["tinyconfig"])
    run([os.path.join(tree, "scripts/kconfig/merge_config.sh"), "-m",
         "-O", out, os.path.join(out, ".config")] + frags, quiet=True,
        capture=True)
    run(["make", "-s", "-C", tree, f"O={out}"] + make_args + ["olddefconfig"])
    with open(os.path.join(out, ".config"), encoding="utf-8") as f:
        actual = parse_config(f.read())
    requested = requested_options(base, variant, with_series)
    if partial_series:
        known = defined_symbols(tree)
        requested = {o: v for o, v in requested.items() if o in known}
    unmet = unmet_options(requested, actual)
    if unmet:
        rows = "\n".join(f"  {o}: wanted {w}, got {g}" for o, w, g in unmet)
        raise HarnessError(f"config {variant}: options the fragments ask for"
                           f" did not end up set:\n{rows}")
