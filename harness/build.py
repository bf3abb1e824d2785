"""Build the kernel image and the cgroup kselftests for a config variant,
out of tree through ccache: the patched tree in build/out/VARIANT, the
unpatched base in build/out/base-VARIANT."""

import os
import time

from . import kconfig, tree
from .common import BUILD, REPO, TREE, log, run

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


def kernel_name(variant, base=False):
    """How runs and reports name a kernel: lean, debug, base-lean..."""
    return f"base-{variant}" if base else variant


def outdir(variant, base=False):
    return os.path.join(BUILD, "out", kernel_name(variant, base))


IMAGE = "arch/x86/boot/bzImage"


def kernel_image(variant, base=False):
    return os.path.join(outdir(variant, base), IMAGE)


def kselftest_dir(variant, base=False):
    return os.path.join(outdir(variant, base), "kselftest-install")


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


def build(variant, base=False):
    """Configure (if needed) and build bzImage plus the cgroup kselftests,
    from build/linux or, with base, from the unpatched base."""
    src = tree.ensure_base_worktree() if base else TREE
    build_at(src, outdir(variant, base), variant,
             with_series=not base and tree.has_series())
    return kernel_image(variant, base)


def build_at(src, out, variant, with_series, selftests=True,
             partial_series=False):
    """Build the tree `src` into `out`; the kselftests go to
    out/kselftest-install.  partial_series: see kconfig.make_config()."""
    os.makedirs(out, exist_ok=True)
    frags = kconfig.fragment_paths(variant, with_series)
    if partial_series or not _config_is_current(out, frags):
        kconfig.make_config(src, out, variant, MAKE_ARGS, with_series,
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
