"""The kernel bases the series is kept for, pinned in base.conf: each one
a Base value that carries everything the harness does differently per
base (its Debian source package, its config fragment, its series, its
baselines, its kernel tree and build directories), so that the modules
take a base and never ask which one it is."""

import os
import re
from dataclasses import dataclass

from .common import BUILD, HarnessError, REPO

CONF = os.path.join(REPO, "base.conf")
# Every key a base's section must set, as base.conf explains them.
KEYS = ("package", "version", "archive", "suite", "component", "deb_sha256",
        "tarball", "tarball_sha256", "fragment", "series", "trace_at_boot")
_YES_NO = {"yes": True, "no": False}
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True)
class Base:
    name: str            # "7.3": base.conf's section, --base's value
    package: str         # Debian's linux-source-X.Y
    version: str         # the package's version, pinned
    # The Debian archive, suite and component that offer that version.
    archive: str
    suite: str
    component: str
    deb_sha256: str
    tarball: str         # the source tarball's path inside the .deb
    tarball_sha256: str
    fragment: str        # its config fragment in configs/
    series: str          # its series' folder in the repository
    # Whether its series' selftests find the series' trace events on from
    # boot (guest_run.SERIES_TRACE_EVENTS) rather than turning them on.
    trace_at_boot: bool

    @property
    def label(self):
        """How reports name the base: its package and version."""
        return f"{self.package} {self.version}"

    @property
    def series_dir(self):
        return os.path.join(REPO, self.series)

    @property
    def baseline_dir(self):
        return os.path.join(REPO, "baseline", self.name)

    @property
    def build_dir(self):
        return os.path.join(BUILD, self.name)

    @property
    def apt_dir(self):
        """The private apt configuration that fetches the package."""
        return os.path.join(self.build_dir, "apt")

    @property
    def source_dir(self):
        """Where the .deb is downloaded and unpacked."""
        return os.path.join(self.build_dir, "source")

    @property
    def tarball_path(self):
        return os.path.join(self.source_dir, self.tarball)

    @property
    def tree(self):
        """The kernel tree: the base as one commit, the series on top."""
        return os.path.join(self.build_dir, "linux")

    @property
    def unpatched_tree(self):
        """The base commit alone, a worktree of `tree`."""
        return os.path.join(self.build_dir, "linux-base")

    @property
    def out_dir(self):
        """Where its kernels are built, one directory each."""
        return os.path.join(self.build_dir, "out")


def parse(text, path=CONF):
    """{name: Base} from base.conf's text, the default base first: a
    `default=NAME` line, then a `[NAME]` section of KEY=VALUE lines per
    base; blank lines and # comments are ignored."""
    default, sections, current = None, {}, None
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        where = f"{path}:{lineno}"
        if line.startswith("[") and line.endswith("]"):
            name = line[1:-1].strip()
            if not name or name in sections:
                raise HarnessError(f"{where}: empty or repeated section: "
                                   f"{line}")
            current = sections[name] = {}
            continue
        key, sep, value = (part.strip() for part in line.partition("="))
        if not sep or not key or not value:
            raise HarnessError(f"{where}: expected KEY=VALUE or [BASE]: "
                               f"{line}")
        if current is None:
            if key != "default":
                raise HarnessError(f"{where}: before the first [BASE] "
                                   f"section only default=BASE: {line}")
            if default is not None:
                raise HarnessError(f"{where}: default repeated: {line}")
            default = value
        elif key not in KEYS or key in current:
            raise HarnessError(f"{where}: unknown or repeated key {key} "
                               f"(a base sets {', '.join(KEYS)})")
        else:
            current[key] = value
    if default is None:
        raise HarnessError(f"{path}: no default=BASE line")
    if default not in sections:
        raise HarnessError(f"{path}: default={default} names no "
                           f"[{default}] section")
    bases = {}
    for name in [default] + [n for n in sections if n != default]:
        conf = sections[name]
        missing = [k for k in KEYS if k not in conf]
        if missing:
            raise HarnessError(f"{path}: [{name}] lacks {', '.join(missing)}")
        for key in ("deb_sha256", "tarball_sha256"):
            if not _SHA256.match(conf[key]):
                raise HarnessError(f"{path}: [{name}] {key} is not a "
                                   f"SHA-256 in hex: {conf[key]}")
        if conf["trace_at_boot"] not in _YES_NO:
            raise HarnessError(f"{path}: [{name}] trace_at_boot is yes or "
                               f"no, not {conf['trace_at_boot']}")
        bases[name] = Base(name=name, **{
            **conf, "trace_at_boot": _YES_NO[conf["trace_at_boot"]]})
    return bases


def load(path=CONF):
    """{name: Base} of base.conf, the default base first."""
    with open(path, encoding="utf-8") as f:
        return parse(f.read(), path)


def get(name=None):
    """The base NAME of base.conf (what --base names), or its default."""
    bases = load()
    if name is None:
        return next(iter(bases.values()))
    if name not in bases:
        raise HarnessError(f"no base {name} in base.conf; choose one of "
                           f"{', '.join(bases)}")
    return bases[name]
