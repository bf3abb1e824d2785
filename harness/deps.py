"""Install what the harness needs: Debian packages, the pinned kernel base
and virtme-ng in a private virtualenv.  Each step is a no-op when satisfied,
so running it on every command costs well under a second."""

import hashlib
import os
import subprocess

from .common import BUILD, REPO, HarnessError, log, run

# Kernel build, selftest build, guest tools and the VM itself; gawk because
# test_cpuset_prs.sh runs `awk -e`, which Debian's default mawk lacks; crun
# and runc are the container runtimes tested in the guest, with
# busybox-static as their containers' root file system; trace-cmd and
# bpftrace run the documented tracing recipes in the guest; memcached is
# the service scenario's server.
APT_PACKAGES = [
    "bc", "bison", "bpftrace", "busybox-static", "ccache", "cpio", "crun", "dwarves",
    "e2fsprogs", "flex", "gawk", "gcc", "git", "kmod", "libcap-dev",
    "libelf-dev", "libssl-dev", "make", "memcached", "perl", "procps", "python3-venv",
    "qemu-system-x86", "rsync", "runc", "trace-cmd", "util-linux",
    "xz-utils",
]
# The private virtualenv: virtme-ng boots the VM; ply and GitPython are what
# checkpatch.pl's SPDX check (scripts/spdxcheck.py) imports; matplotlib
# draws the benchmark plots.
VENV_PACKAGES = ["virtme-ng==1.42", "ply==3.11", "GitPython==3.2.1",
                 "matplotlib==3.9.2", "numpy==2.1.3"]
VENV = os.path.join(BUILD, "venv")
VENV_BIN = os.path.join(VENV, "bin")
VNG = os.path.join(VENV_BIN, "vng")
VENV_PYTHON = os.path.join(VENV_BIN, "python3")
_VENV_STAMP = os.path.join(VENV, "harness-packages")


def read_base_conf(path=os.path.join(REPO, "base.conf")):
    """Return the pinned base as a dict (package, version, tarball, sha256)."""
    conf = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            key, sep, value = line.partition("=")
            if not sep:
                raise HarnessError(f"{path}: malformed line: {line}")
            conf[key.strip()] = value.strip()
    missing = {"package", "version", "tarball", "sha256"} - conf.keys()
    if missing:
        raise HarnessError(f"{path}: missing {', '.join(sorted(missing))}")
    return conf


def _installed_versions(packages):
    res = subprocess.run(
        ["dpkg-query", "-W", "-f=${Package} ${Version} ${db:Status-Abbrev}\n"]
        + packages, text=True, capture_output=True)
    versions = {}
    for line in res.stdout.splitlines():
        fields = line.split()
        if len(fields) >= 3 and fields[2].startswith("ii"):
            versions[fields[0]] = fields[1]
    return versions


def _apt_get(args):
    env = {"DEBIAN_FRONTEND": "noninteractive"}
    run(["apt-get", "-y", "-q", "-o", "Dpkg::Use-Pty=0"] + args, env=env)


def _apt_install(specs):
    log(f"installing Debian packages: {' '.join(specs)}")
    try:
        _apt_get(["install", "--no-install-recommends"] + specs)
    except HarnessError:
        log("apt-get install failed; refreshing package lists and retrying")
        _apt_get(["update"])
        _apt_get(["install", "--no-install-recommends"] + specs)


def available_versions(package):
    """Versions of a package the archive offers, newest first."""
    res = subprocess.run(["apt-cache", "madison", package], text=True,
                         capture_output=True)
    return [line.split("|")[1].strip() for line in res.stdout.splitlines()
            if line.count("|") >= 2]


def sha256_of(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def ensure_base(conf):
    """Install the pinned linux-source package and verify its tarball."""
    pkg, version = conf["package"], conf["version"]
    if _installed_versions([pkg]).get(pkg) != version:
        try:
            _apt_install([f"{pkg}={version}"])
        except HarnessError as err:
            offered = available_versions(pkg)
            newest = offered[0] if offered else "none"
            raise HarnessError(
                f"cannot install the pinned base {pkg}={version}: {err}\n"
                f"The archive offers: {', '.join(offered) or 'nothing'} "
                f"(newest 6.12: {newest}). Not building on another version;"
                f" update base.conf deliberately if the pin must move."
            ) from None
    tarball = conf["tarball"]
    if not os.path.exists(tarball):
        raise HarnessError(f"{pkg}={version} is installed but {tarball} "
                           "is missing")
    stamp = os.path.join(BUILD, "base.sha256-ok")
    st = os.stat(tarball)
    token = f"{conf['sha256']} {st.st_size} {st.st_mtime_ns}\n"
    if os.path.exists(stamp) and open(stamp, encoding="utf-8").read() == token:
        return tarball
    log(f"verifying SHA-256 of {tarball}")
    actual = sha256_of(tarball)
    if actual != conf["sha256"]:
        raise HarnessError(f"{tarball}: SHA-256 {actual} does not match "
                           f"the pinned {conf['sha256']}; refusing to go on")
    os.makedirs(BUILD, exist_ok=True)
    with open(stamp, "w", encoding="utf-8") as f:
        f.write(token)
    return tarball


def ensure_packages():
    present = _installed_versions(APT_PACKAGES)
    missing = [p for p in APT_PACKAGES if p not in present]
    if missing:
        _apt_install(missing)


def ensure_venv():
    """virtme-ng and checkpatch's Python modules, pinned, in build/venv."""
    wanted = "\n".join(VENV_PACKAGES)
    if os.path.exists(_VENV_STAMP):
        with open(_VENV_STAMP, encoding="utf-8") as f:
            if f.read() == wanted:
                return
    log(f"installing {', '.join(VENV_PACKAGES)} into {VENV}")
    run(["python3", "-m", "venv", VENV])
    run([os.path.join(VENV_BIN, "pip"), "install", "-q"] + VENV_PACKAGES)
    with open(_VENV_STAMP, "w", encoding="utf-8") as f:
        f.write(wanted)


def venv_env():
    """Environment with build/venv/bin first on PATH."""
    return {"PATH": VENV_BIN + os.pathsep + os.environ.get("PATH", "")}


def ensure_all():
    """Everything the build and the VM need, installed and verified."""
    ensure_packages()
    ensure_base(read_base_conf())
    ensure_venv()
