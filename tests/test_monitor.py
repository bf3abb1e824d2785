import os
import socket
import tempfile
import threading
import unittest
from unittest import mock

from harness import monitor, vm

SYSTEM_MAP = """\
ffffffff81000000 T _text
ffffffff81e6b6a0 T default_idle
ffffffff81e6b700 t spin_here
ffffffff82a05a00 D jiffies_64
"""

# What QEMU 7.2 answers to `info registers -a`, cut to the lines read.
REGISTERS = """info registers -a\r
\r
CPU#0\r
RAX=0000000000000000 RBX=0000000000000000 RCX=0000000000000001\r
RIP=ffffffff81e6b6b7 RFL=00000246 [---Z-P-] CPL=0 II=0 A20=1 SMM=0 HLT=1\r
\r
CPU#1\r
RAX=0000000000000001 RBX=0000000000000000 RCX=0000000000000001\r
RIP=ffffffff81e6b710 RFL=00000002 [-------] CPL=0 II=0 A20=1 SMM=0 HLT=0\r
"""


class FakeMonitor:
    """A unix socket server that answers like QEMU's human monitor, or,
    MUTE, accepts and never answers."""

    def __init__(self, answers, mute=False):
        self.dir = tempfile.mkdtemp()
        self.path = os.path.join(self.dir, "sock")
        self.server = socket.socket(socket.AF_UNIX)
        self.server.bind(self.path)
        self.server.listen()
        self.answers, self.mute = answers, mute
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            with conn:
                if self.mute:
                    conn.recv(1)
                    continue
                conn.sendall(b"QEMU 7.2.22 monitor\r\n" + monitor.PROMPT)
                for line in conn.makefile("rb"):
                    answer = self.answers(line.decode().strip())
                    conn.sendall(answer.encode() + monitor.PROMPT)

    def close(self):
        self.server.close()
        os.remove(self.path)
        os.rmdir(self.dir)


class MonitorReportTest(unittest.TestCase):
    def setUp(self):
        fd, self.map = tempfile.mkstemp()
        with os.fdopen(fd, "w") as f:
            f.write(SYSTEM_MAP)
        self.addCleanup(os.remove, self.map)

    def serve(self, answers, mute=False):
        fake = FakeMonitor(answers, mute)
        self.addCleanup(fake.close)
        return fake.path

    def test_vcpus_halted_or_running_and_where(self):
        states = monitor.vcpu_states(REGISTERS, monitor.Symbols(self.map))
        self.assertEqual(states, "vCPU 0 halted at default_idle+0x17; "
                         "vCPU 1 running at spin_here+0x10")

    def test_clock_that_stood_still(self):
        path = self.serve(lambda c: REGISTERS if c.startswith("info")
                          else "ffffffff82a05a00: 0x0000000100000a00\r\n")
        with mock.patch.object(monitor.time, "sleep"):
            lines = monitor.report(path, self.map)
        self.assertEqual(len(lines), 1 + monitor.SAMPLES + 1)
        self.assertIn("halted at default_idle+0x17", lines[1])
        self.assertIn("clock stood still (jiffies 4294969856)", lines[-1])
        self.assertIn("spin with interrupts off", lines[-1])

    def test_clock_that_stood_still_with_every_vcpu_halted(self):
        halted = REGISTERS.replace("HLT=0", "HLT=1")
        path = self.serve(lambda c: halted if c.startswith("info")
                          else "ffffffff82a05a00: 0x0000000100000a00\r\n")
        with mock.patch.object(monitor.time, "sleep"):
            lines = monitor.report(path, self.map)
        self.assertIn("clock stood still (jiffies 4294969856)", lines[-1])
        self.assertIn("every vCPU halted", lines[-1])

    def test_clock_that_ran(self):
        ticks = iter(range(1000, 2000, 250))
        path = self.serve(lambda c: REGISTERS if c.startswith("info")
                          else f"ffffffff82a05a00: {next(ticks):#018x}\r\n")
        with mock.patch.object(monitor.time, "sleep"):
            lines = monitor.report(path, self.map)
        self.assertIn("clock ran (500 jiffies in 2s)", lines[-1])

    def test_monitor_that_does_not_answer(self):
        path = self.serve(None, mute=True)
        with mock.patch.object(monitor, "ANSWER_SECONDS", 0.2):
            lines = monitor.report(path, self.map)
        self.assertEqual(len(lines), 2)
        self.assertIn("the emulator itself is stuck", lines[1])

    def test_no_monitor(self):
        lines = monitor.report("/nonexistent/sock", self.map)
        self.assertIn("cannot ask the monitor", lines[1])

    def test_timeout_report_carries_the_vcpus(self):
        report = vm.timeout_report(60, "c.log", ["last\n"],
                                   ["QEMU monitor, 3 looks", "  vCPU 0 x"])
        self.assertIn("QEMU monitor, 3 looks\n  vCPU 0 x\nthe console's",
                      report)


if __name__ == "__main__":
    unittest.main()
