"""Where a hung guest's vCPUs are, asked of QEMU's human monitor before
the harness kills the guest.

A guest that prints nothing for its last half hour, not even the hung
task or soft lockup reports it would print if its tasks or CPUs were
stuck, leaves its console no clue.  The monitor tells which of three it
is: every vCPU halted (the guest waits for an interrupt or a timer that
never comes, so the emulator's clock or interrupt delivery is stuck),
vCPUs whose instruction pointer stays in one kernel function (they spin
there with interrupts off), or no answer at all (the emulator itself is
stuck)."""

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


def vcpu_states(registers, symbols):
    """One line of `info registers -a` output: each vCPU halted or running,
    and where."""
    states = []
    for cpu, body in re.findall(r"CPU#(\d+)\s*\n(.*?)(?=CPU#\d+\s*\n|\Z)",
                                registers, re.S):
        rip = re.search(r"RIP=([0-9a-f]+)", body)
        halted = re.search(r"HLT=1", body)
        where = symbols.name(int(rip.group(1), 16)) if rip else "?"
        states.append(f"vCPU {cpu} {'halted' if halted else 'running'} "
                      f"at {where}")
    return "; ".join(states) or "no vCPU in the monitor's answer"


def jiffies_value(answer):
    """The 64-bit value in the monitor's answer to `x /1gx ADDRESS`."""
    found = re.search(r"[0-9a-f]+: (0x[0-9a-f]+)", answer)
    return int(found.group(1), 16) if found else None


def clock_verdict(jiffies):
    """Whether the guest's clock (JIFFIES, one per look) moved."""
    known = [j for j in jiffies if j is not None]
    if len(known) < 2:
        return "the guest's jiffies could not be read"
    if known[-1] == known[0]:
        return (f"the guest's clock stood still (jiffies {known[0]}): no "
                "timer fires in it, so the emulator's clock is stuck")
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
        jiffies.append(jiffies_value(rest[0]) if rest else None)
    else:
        lines.append("  " + clock_verdict(jiffies))
    return lines
