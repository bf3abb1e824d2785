"""Where a hung guest's vCPUs are, asked of QEMU's human monitor before
the harness kills the guest.

A guest that prints nothing for its last half hour, not even the hung
task or soft lockup reports it would print if its tasks or CPUs were
stuck, leaves its console no clue.  The monitor tells: whether each vCPU
is halted or running and in which kernel function, and whether the
guest's jiffies move.  Jiffies that move mean its tasks are stuck (and
its own reports should have said so); jiffies that stand still with every
vCPU halted mean no timer interrupt reaches the guest (the emulator's
clock or interrupt delivery is stuck); standing still with vCPUs running
in one place, that they spin with interrupts off.  No answer at all
means the emulator itself is stuck."""

import bisect
import re
import socket
import time

PROMPT = b"(qemu) "
# Samples a second apart: an instruction pointer that moves within them is
# a vCPU at work, one that stays is halted or spinning in one place.
SAMPLES = 3
ANSWER_SECONDS = 5


def qemu_option(path):
    """The QEMU option that serves the human monitor on unix socket PATH."""
    return f"-monitor unix:{path},server=on,wait=off"


def _until_prompt(sock):
    data = b""
    while not data.endswith(PROMPT):
        chunk = sock.recv(65536)
        if not chunk:
            raise OSError("the monitor closed the connection")
        data += chunk
    return data.decode(errors="replace")


def ask(path, commands):
    """Each of COMMANDS' output from the monitor at PATH; OSError when it
    does not answer within ANSWER_SECONDS."""
    with socket.socket(socket.AF_UNIX) as sock:
        sock.settimeout(ANSWER_SECONDS)
        sock.connect(path)
        _until_prompt(sock)
        answers = []
        for command in commands:
            sock.sendall(command.encode() + b"\n")
            answers.append(_until_prompt(sock))
        return answers


class Symbols:
    """Kernel text addresses to symbol+offset, and the address of jiffies_64
    (None if unknown), from a System.map."""

    def __init__(self, system_map):
        entries = []
        self.jiffies = None
        try:
            with open(system_map, encoding="utf-8") as f:
                for line in f:
                    fields = line.split()
                    if len(fields) != 3:
                        continue
                    if fields[1] in "TtWw":
                        entries.append((int(fields[0], 16), fields[2]))
                    elif fields[2] == "jiffies_64":
                        self.jiffies = int(fields[0], 16)
        except OSError:
            pass
        entries.sort()
        self.addresses = [address for address, _ in entries]
        self.names = [name for _, name in entries]

    def name(self, address):
        i = bisect.bisect_right(self.addresses, address) - 1
        if i < 0:
            return f"{address:#x}"
        return f"{self.names[i]}+{address - self.addresses[i]:#x}"


def vcpus(registers, symbols):
    """(vCPU, halted, where) for each vCPU in `info registers -a`."""
    found = []
    for cpu, body in re.findall(r"CPU#(\d+)\s*\n(.*?)(?=CPU#\d+\s*\n|\Z)",
                                registers, re.S):
        rip = re.search(r"RIP=([0-9a-f]+)", body)
        where = symbols.name(int(rip.group(1), 16)) if rip else "?"
        found.append((cpu, "HLT=1" in body, where))
    return found


def vcpu_states(registers, symbols):
    """One line of `info registers -a` output: each vCPU halted or running,
    and where."""
    return "; ".join(f"vCPU {cpu} {'halted' if halted else 'running'} "
                     f"at {where}"
                     for cpu, halted, where in vcpus(registers, symbols)) \
        or "no vCPU in the monitor's answer"


def jiffies_value(answer):
    """The 64-bit value in the monitor's answer to `x /1gx ADDRESS`."""
    found = re.search(r"[0-9a-f]+: (0x[0-9a-f]+)", answer)
    return int(found.group(1), 16) if found else None


def clock_verdict(jiffies, all_halted):
    """Whether the guest's clock (JIFFIES, one per look) moved, and what
    that says with every vCPU halted at the last look (ALL_HALTED) or
    not.  Jiffies stand still both when the emulator delivers no timer
    interrupt and when every vCPU spins with interrupts off."""
    known = [j for j in jiffies if j is not None]
    if len(known) < 2:
        return "the guest's jiffies could not be read"
    if known[-1] == known[0] and all_halted:
        return (f"the guest's clock stood still (jiffies {known[0]}) with "
                "every vCPU halted: no timer interrupt reaches it, so the "
                "emulator's clock or interrupt delivery is stuck")
    if known[-1] == known[0]:
        return (f"the guest's clock stood still (jiffies {known[0]}) with "
                "vCPUs running: they spin with interrupts off, or the "
                "emulator delivers no timer interrupt")
    return (f"the guest's clock ran ({known[-1] - known[0]} jiffies in "
            f"{len(known) - 1}s): its tasks, not the emulator, are stuck")


def report(path, system_map):
    """Lines saying where the vCPUs were in SAMPLES looks a second apart
    and whether the guest's clock moved, or why the monitor could not
    say."""
    symbols = Symbols(system_map)
    lines = [f"QEMU monitor, {SAMPLES} looks a second apart:"]
    commands = ["info registers -a"]
    if symbols.jiffies is not None:
        commands.append(f"x /1gx {symbols.jiffies:#x}")
    jiffies = []
    all_halted = False
    for n in range(SAMPLES):
        if n:
            time.sleep(1)
        try:
            registers, *rest = ask(path, commands)
        except socket.timeout:
            lines.append(f"  no answer in {ANSWER_SECONDS}s: the emulator "
                         "itself is stuck")
            break
        except OSError as err:
            lines.append(f"  cannot ask the monitor: {err}")
            break
        lines.append("  " + vcpu_states(registers, symbols))
        all_halted = all(halted for _, halted, _ in vcpus(registers, symbols))
        jiffies.append(jiffies_value(rest[0]) if rest else None)
    else:
        lines.append("  " + clock_verdict(jiffies, all_halted))
    return lines
