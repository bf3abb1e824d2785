"""Boot a kernel under QEMU with virtme-ng and run a guest script."""

import os
import re
import shutil
import subprocess
import tempfile
import threading
import time

from . import monitor, splat
from .common import GUEST, HarnessError, log, run
from .deps import VNG, venv_env

SCRATCH_SIZE = "3G"
SWAP_SIZE = "1G"
# Progress lines worth showing from a guest run: test starts and results.
_PROGRESS = re.compile(r"^(# selftests: |ok |not ok |guest: |demo: |bench: |\|)")


def kvm_usable():
    """KVM only on request (BGR_KVM=1) and only when /dev/kvm opens."""
    if os.environ.get("BGR_KVM") != "1":
        return False
    try:
        fd = os.open("/dev/kvm", os.O_RDWR)
    except OSError as err:
        log(f"BGR_KVM=1 but /dev/kvm is not usable ({err}); using TCG")
        return False
    os.close(fd)
    return True


def make_disks(rundir):
    """A fresh ext4 scratch disk and a swap disk, both sparse files."""
    scratch = os.path.join(rundir, "scratch.img")
    swap = os.path.join(rundir, "swap.img")
    for path, size in ((scratch, SCRATCH_SIZE), (swap, SWAP_SIZE)):
        if os.path.exists(path):
            os.remove(path)
        run(["truncate", "-s", size, path], quiet=True)
    run(["mkfs.ext4", "-q", "-F", scratch], quiet=True)
    run(["mkswap", "-q", swap], quiet=True, capture=True)
    return [scratch, swap]


def progress_line(line):
    """The guest's progress lines, echoed as they are."""
    return line.rstrip() if _PROGRESS.match(line) else None


def numa_options(nodes, cpus, memory_gib):
    """vng options for a guest of NODES NUMA nodes that share the CPUs and
    the memory evenly."""
    if cpus % nodes or memory_gib % nodes:
        raise HarnessError(f"{cpus} vCPUs and {memory_gib} GiB do not split "
                           f"evenly into {nodes} NUMA nodes")
    per = cpus // nodes
    opts = []
    for node in range(nodes):
        first = node * per
        opts += ["--numa", f"{memory_gib // nodes}G,cpus={first}"
                 + (f"-{first + per - 1}" if per > 1 else "")]
    return opts


def guest_command(command):
    """The string vng runs in the guest, COMMAND under guest/reap.py.  The
    guest splits it at blanks, so an argument that is empty or has a blank
    would not arrive as it is: refuse it."""
    for arg in command:
        if not arg or any(c.isspace() for c in arg):
            raise HarnessError(f"guest command argument {arg!r} would not "
                               "survive the guest's word splitting")
    return " ".join(["python3", os.path.join(GUEST, "reap.py")] + command)


def smp_topology(cpus, nodes):
    """QEMU's -smp for CPUS vCPUs on NODES NUMA nodes: a socket per node,
    since CPUs of one socket share a last-level cache, and the kernel
    warns at boot (topology_sane()) when those are on different nodes."""
    if nodes <= 1:
        return str(cpus)
    return f"{cpus},sockets={nodes},cores={cpus // nodes},threads=1"


def boot(kernel, rundir, command, cpus=2, memory_gib=4, timeout=3600,
         echo=progress_line, icount=False, numa_nodes=1, one_thread=False,
         trace_events=()):
    """Boot `kernel` and run `command` (a list) as root in the guest.

    The guest may write into `rundir`.  Its whole console output goes to
    rundir/console.log; echo(line) says what to show of each line (None:
    nothing).  With `icount`, the guest's clocks count the instructions
    it executes (one per nanosecond) instead of following the host's, so a
    CPU-time measurement in the guest does not depend on how the host
    schedules the emulator; it needs TCG.  With `one_thread`, one host
    thread runs the vCPUs in turn (TCG's round robin) on the host's
    clock.  With NUMA_NODES above 1, the
    CPUs and memory are split evenly into that many nodes.  TRACE_EVENTS
    ("system:event") are enabled at boot, before the other CPUs start:
    enabling one later patches kernel text (static calls), which under
    QEMU's multi-threaded TCG oopsed with int3 as jump labels did; the
    guest then only starts and stops the ring buffer.  Returns the
    console text.  Raises HarnessError on timeout."""
    os.makedirs(rundir, exist_ok=True)
    disks = make_disks(rundir)
    # The harness kills the guest at TIMEOUT, once QEMU's monitor has said
    # where its vCPUs are; `timeout` is the backstop should that fail.
    cmd = ["timeout", "--kill-after=10", str(timeout + 60), VNG, "--run", kernel, "--verbose", "--force-9p",
           "--disable-microvm", "--cpus", smp_topology(cpus, numa_nodes),
           "--memory", f"{memory_gib}G", "--rwdir", rundir, "--user", "root"]
    if numa_nodes > 1:
        cmd += numa_options(numa_nodes, cpus, memory_gib)
    if icount or one_thread or not kvm_usable():
        cmd.append("--disable-kvm")
    for disk in disks:
        cmd += ["--disk", disk]
    # no5lvl: with 5-level paging, KASAN reported a wild access while
    # identify_cpu() had cleared the feature bits (base debug kernel, one
    # boot in several); 4-level paging covers the guest's 4 GiB.  The hung
    # task limit is a sysctl, not a boot parameter of its own (as
    # hung_task_timeout_secs=60 it went to the guest's init, and the lean
    # kernel kept its default of 120 s).
    append = "panic_on_warn=0 sysctl.kernel.hung_task_timeout_secs=60 no5lvl"
    if one_thread:
        # Each vCPU runs a CPUS-th of the time while the guest's clock, the
        # host's, runs on, so it executes that much less per guest second
        # than a vCPU with a thread of its own.  The RCU stall and soft
        # lockup limits (21 s and 20 s) scale by as much: at 21 s, one of
        # two such guests side by side reported an RCU stall on a CPU
        # reading a file (2,167 ticks in the grace period, no soft lockup).
        append += (f" rcupdate.rcu_cpu_stall_timeout={min(21 * cpus, 300)}"
                   f" watchdog_thresh={min(10 * cpus, 60)}")
    if trace_events:
        append += " trace_event=" + ",".join(trace_events)
    cmd += ["--append", append]
    # Under a subreaper: the guest's init leaves orphans as zombies, which
    # keep their dead cgroups alive.
    cmd += ["--exec", guest_command(command)]
    # A short path: a unix socket's must fit in 108 bytes.
    mondir = tempfile.mkdtemp(prefix="bgr-monitor-")
    monitor_path = os.path.join(mondir, "sock")
    qemu_opts = [monitor.qemu_option(monitor_path)]
    if one_thread:
        qemu_opts.append("-accel tcg,thread=single")
    if icount:
        qemu_opts.append("-icount shift=0")
    cmd.append("--qemu-opts=" + " ".join(qemu_opts))
    # bzImage is at arch/x86/boot/ in the build directory, System.map at
    # its top.
    system_map = os.path.join(os.path.dirname(kernel), "..", "..", "..",
                              "System.map")
    log(f"booting {os.path.relpath(kernel)} ({cpus} vCPUs, {memory_gib} GiB"
        + (f", {numa_nodes} NUMA nodes)" if numa_nodes > 1 else ")"))
    console_path = os.path.join(rundir, "console.log")
    start = time.monotonic()
    lines = []
    # Line-buffered: when a guest hangs, the log on disk is up to date.
    with open(console_path, "w", encoding="utf-8", buffering=1) as console:
        # vng runs virtme-run, which must be found on PATH.
        env = dict(os.environ, **venv_env())
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, env=env,
                                stderr=subprocess.STDOUT, text=True,
                                errors="replace", stdin=subprocess.DEVNULL)
        hung = []

        def kill_hung():
            hung.extend(monitor.report(monitor_path, system_map))
            # `timeout` passes the signal on to vng and QEMU.
            proc.terminate()
        watchdog = threading.Timer(timeout, kill_hung)
        watchdog.daemon = True
        watchdog.start()
        try:
            for line in proc.stdout:
                console.write(line)
                lines.append(line)
                shown = echo(line)
                if shown is not None:
                    print("  " + shown, flush=True)
            proc.wait()
        finally:
            watchdog.cancel()
            if watchdog.is_alive():
                watchdog.join()
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            shutil.rmtree(mondir, ignore_errors=True)
    log(f"guest exited after {time.monotonic() - start:.0f}s "
        f"(console log: {os.path.relpath(console_path)})")
    for disk in disks:
        os.remove(disk)
    if hung or proc.returncode in (124, 137):
        raise HarnessError(timeout_report(timeout, console_path, lines, hung))
    return "".join(lines)


# How much of the console a killed guest's report shows: what the guest
# printed last says where it hung (CI keeps only the report, not the log).
TIMEOUT_TAIL_LINES = 30


def timeout_report(timeout, console_path, lines, vcpus=()):
    """Why a guest was killed: its console's splats, where its vCPUs were
    (VCPUS, monitor.report()'s lines) and its console's last lines."""
    found = splat.find_splats("".join(lines))
    report = [f"guest run killed after {timeout}s; see {console_path}"]
    if found:
        report.append(splat.format_splats(found))
    report.extend(vcpus)
    report.append(f"the console's last {TIMEOUT_TAIL_LINES} lines:")
    report.extend("  " + line.rstrip("\n")
                  for line in lines[-TIMEOUT_TAIL_LINES:])
    return "\n".join(report)


def fresh_rundir(path):
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path
