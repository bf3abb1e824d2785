"""Build the kernel image and the cgroup kselftests for a config variant,
out of tree in build/out/VARIANT, through ccache."""

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


def outdir(variant):
    return os.path.join(BUILD, "out", variant)


def kernel_image(variant):
    return os.path.join(outdir(variant), "arch/x86/boot/bzImage")


def kselftest_dir(variant):
    return os.path.join(outdir(variant), "kselftest-install")


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


def build(variant):
    """Configure (if needed) and build bzImage plus the cgroup kselftests."""
    out = outdir(variant)
    os.makedirs(out, exist_ok=True)
    with_series = tree.has_series()
    frags = kconfig.fragment_paths(variant, with_series)
    if not _config_is_current(out, frags):
        kconfig.make_config(TREE, out, variant, MAKE_ARGS, with_series)
        with open(os.path.join(out, "harness-fragments"), "w",
                  encoding="utf-8") as f:
            f.write("\n".join(frags))
    make = ["make", "-C", TREE, f"O={out}", f"-j{JOBS}"] + MAKE_ARGS
    start = time.monotonic()
    log(f"building the {variant} kernel (bzImage) in {os.path.relpath(out)}")
    run(make + ["bzImage"], env=BUILD_ENV)
    log(f"kernel built in {time.monotonic() - start:.0f}s")
    run(make + ["-s", "headers"], env=BUILD_ENV)
    log("building the cgroup kselftests")
    run(["make", "-s", "-C", os.path.join(TREE, "tools/testing/selftests"),
         f"O={out}", "TARGETS=cgroup", f"-j{JOBS}", "CC=ccache gcc",
         f"INSTALL_PATH={kselftest_dir(variant)}", "install"], env=BUILD_ENV)
    return kernel_image(variant)
