"""Build the kernel image and the cgroup kselftests of a base for a config
variant, out of tree through ccache: the patched tree in
build/BASE/out/VARIANT, the unpatched base in build/BASE/out/base-VARIANT."""

import os
import time

from . import kconfig, tree
from .common import REPO, log, run

JOBS = str((os.cpu_count() or 1) + 1)
# A fixed build identity keeps init/version.c, and so ccache, stable.
BUILD_ENV = {
    "KBUILD_BUILD_TIMESTAMP": "2025-01-01",
    "KBUILD_BUILD_USER": "bgreclaim",
    "KBUILD_BUILD_HOST": "harness",
    # Hash paths relative to the repo, so a fresh clone elsewhere hits.
    "CCACHE_BASEDIR": REPO,
    "CCACHE_NOHASHDIR": "1",
    "CCACHE_MAXSIZE": os.environ.get("CCACHE_MAXSIZE", "8G"),
}
MAKE_ARGS = ["CC=ccache gcc", "HOSTCC=ccache gcc"]


def outdir(base, variant, unpatched=False):
    return os.path.join(base.out_dir,
                        f"base-{variant}" if unpatched else variant)


def kernel_name(base, variant, unpatched=False):
    """How runs and reports name a kernel: its build directory's name
    after the base's, 7.3-lean, 6.12-base-debug..."""
    return f"{base.name}-{os.path.basename(outdir(base, variant, unpatched))}"


IMAGE = "arch/x86/boot/bzImage"


def kernel_image(base, variant, unpatched=False):
    return os.path.join(outdir(base, variant, unpatched), IMAGE)


def kselftest_dir(base, variant, unpatched=False):
    return os.path.join(outdir(base, variant, unpatched), "kselftest-install")


def _config_is_current(out, frags):
    """True when .config was made from these fragments, after their last
    change."""
    config = os.path.join(out, ".config")
    stamp = os.path.join(out, "harness-fragments")
    if not os.path.exists(config) or not os.path.exists(stamp):
        return False
    with open(stamp, encoding="utf-8") as f:
        if f.read() != "\n".join(frags):
            return False
    made = os.path.getmtime(config)
    return all(os.path.getmtime(p) < made for p in frags)


def build(base, variant, unpatched=False):
    """Configure (if needed) and build bzImage plus the cgroup kselftests,
    from the base's tree or, with unpatched, from the base alone.  An
    empty series leaves the tree at the base: then no series.config."""
    src = tree.ensure_unpatched_worktree(base) if unpatched else base.tree
    build_at(base, src, outdir(base, variant, unpatched), variant,
             with_series=not unpatched and tree.has_series(base))
    return kernel_image(base, variant, unpatched)


def build_at(base, src, out, variant, with_series, selftests=True,
             partial_series=False):
    """Build the tree `src` of BASE into `out`; the kselftests go to
    out/kselftest-install.  partial_series: see kconfig.make_config()."""
    os.makedirs(out, exist_ok=True)
    frags = kconfig.fragment_paths(base, variant, with_series)
    if partial_series or not _config_is_current(out, frags):
        kconfig.make_config(base, src, out, variant, MAKE_ARGS, with_series,
                            partial_series)
        with open(os.path.join(out, "harness-fragments"), "w",
                  encoding="utf-8") as f:
            f.write("\n".join(frags))
    make = ["make", "-C", src, f"O={out}", f"-j{JOBS}"] + MAKE_ARGS
    start = time.monotonic()
    log(f"building bzImage in {os.path.relpath(out)}")
    run(make + ["bzImage"], env=BUILD_ENV)
    log(f"kernel built in {time.monotonic() - start:.0f}s")
    if not selftests:
        return
    run(make + ["-s", "headers"], env=BUILD_ENV)
    log("building the cgroup kselftests")
    run(["make", "-s", "-C", os.path.join(src, "tools/testing/selftests"),
         f"O={out}", "TARGETS=cgroup", f"-j{JOBS}", "CC=ccache gcc",
         f"INSTALL_PATH={os.path.join(out, 'kselftest-install')}",
         "install"], env=BUILD_ENV)
