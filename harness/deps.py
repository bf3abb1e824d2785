"""Install what the harness needs: Debian packages, a pinned kernel base
and virtme-ng in a private virtualenv.  Each step is a no-op when satisfied,
so running it on every command costs well under a second."""

import glob
import hashlib
import os
import subprocess

from .common import BUILD, HarnessError, log, run

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
# The key the Debian archives sign with, from the host's
# debian-archive-keyring: the bases' own sources list trusts it alone.
DEBIAN_KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"


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


def _apt_get(args, cwd=None):
    env = {"DEBIAN_FRONTEND": "noninteractive"}
    run(["apt-get", "-y", "-q", "-o", "Dpkg::Use-Pty=0"] + args, cwd=cwd,
        env=env)


def _apt_install(specs):
    log(f"installing Debian packages: {' '.join(specs)}")
    try:
        _apt_get(["install", "--no-install-recommends"] + specs)
    except HarnessError:
        log("apt-get install failed; refreshing package lists and retrying")
        _apt_get(["update"])
        _apt_get(["install", "--no-install-recommends"] + specs)


def sha256_of(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _verify(path, pinned):
    log(f"verifying SHA-256 of {os.path.relpath(path)}")
    actual = sha256_of(path)
    if actual != pinned:
        raise HarnessError(f"{path}: SHA-256 {actual} does not match the "
                           f"pinned {pinned} (base.conf); refusing to go on")


def _private_apt(base):
    """apt-get options for an apt configuration of the base's own: its
    archive alone in its sources list, its own package lists and cache,
    and an empty dpkg status, so that fetching the base changes neither
    the host's apt sources nor its installed packages."""
    apt = base.apt_dir
    for sub in ("lists/partial", "cache/archives/partial"):
        os.makedirs(os.path.join(apt, sub), exist_ok=True)
    sources = os.path.join(apt, "sources.list")
    with open(sources, "w", encoding="utf-8") as f:
        f.write(f"deb [signed-by={DEBIAN_KEYRING}] {base.archive} "
                f"{base.suite} {base.component}\n")
    status = os.path.join(apt, "status")
    open(status, "w", encoding="utf-8").close()
    return ["-o", f"Dir::Etc::SourceList={sources}",
            "-o", "Dir::Etc::SourceParts=/dev/null",
            "-o", f"Dir::State::Lists={os.path.join(apt, 'lists')}",
            "-o", f"Dir::Cache={os.path.join(apt, 'cache')}",
            "-o", f"Dir::State::status={status}"]


def _download(base):
    """The base's pinned .deb in base.source_dir, downloaded unless a
    complete one is there (apt-get download keeps it).  Run as root,
    apt warns that its _apt user cannot write there: harmless."""
    opts = _private_apt(base)
    os.makedirs(base.source_dir, exist_ok=True)
    spec = f"{base.package}={base.version}"
    log(f"fetching {spec} from {base.archive} {base.suite}")
    _apt_get(opts + ["update"])
    try:
        _apt_get(opts + ["download", spec], cwd=base.source_dir)
    except HarnessError as err:
        madison = run(["apt-cache"] + opts + ["madison", base.package],
                      check=False, capture=True, quiet=True).stdout
        offered = [line.split("|")[1].strip()
                   for line in madison.splitlines() if line.count("|") >= 2]
        raise HarnessError(
            f"cannot download the pinned base {spec}: {err}\n"
            f"{base.suite} offers: {', '.join(offered) or 'nothing'}. Not "
            "building on another version; update base.conf deliberately "
            "if the pin must move.") from None
    # apt-get download names the file PACKAGE_VERSION_ARCH.deb, with an
    # epoch's colon as %3a.
    found = glob.glob(os.path.join(
        base.source_dir,
        f"{base.package}_{base.version.replace(':', '%3a')}_*.deb"))
    if len(found) != 1:
        raise HarnessError(f"apt-get download left {len(found)} .deb files "
                           f"of {spec} in {base.source_dir}")
    return found[0]


def ensure_base(base):
    """The base's pinned source tarball, fetched, checked and unpacked
    into build/BASE/source; afterwards a stamp file says it was verified,
    so that later commands do not hash its 150 MB again."""
    tarball = base.tarball_path
    stamp = os.path.join(base.build_dir, "tarball.sha256-ok")

    def token():
        st = os.stat(tarball)
        return f"{base.tarball_sha256} {st.st_size} {st.st_mtime_ns}\n"

    if os.path.exists(tarball) and os.path.exists(stamp):
        with open(stamp, encoding="utf-8") as f:
            if f.read() == token():
                return tarball
    deb = _download(base)
    _verify(deb, base.deb_sha256)
    log(f"unpacking {os.path.basename(deb)}")
    run(["dpkg-deb", "-x", deb, base.source_dir])
    _verify(tarball, base.tarball_sha256)
    with open(stamp, "w", encoding="utf-8") as f:
        f.write(token())
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


def ensure_all(base):
    """Everything the build and the VM need for BASE, installed and
    verified."""
    ensure_packages()
    ensure_base(base)
    ensure_venv()
