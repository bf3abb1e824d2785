import os
import unittest

from harness import splat

DATA = os.path.join(os.path.dirname(__file__), "data")


def load(name):
    with open(os.path.join(DATA, name), encoding="utf-8") as f:
        return f.read()


class FindSplatsTest(unittest.TestCase):
    def kinds(self, text):
        return [kind for kind, _, _ in splat.find_splats(text)]

    def test_clean_boot_has_none(self):
        self.assertEqual(splat.find_splats(load("console-clean.log")), [])

    def test_warn_on(self):
        found = splat.find_splats(load("console-warn.log"))
        self.assertEqual(found[0][0], "WARNING")
        self.assertIn("mm/memcontrol.c", found[0][1])

    def test_lockdep(self):
        # A real report from the debug kernel (PROVE_LOCKING).
        found = splat.find_splats(load("console-lockdep.log"))
        self.assertEqual(found[0][0], "lockdep")
        self.assertIn("possible circular locking", found[0][1])

    def test_kasan(self):
        # A real report from the debug kernel (KASAN generic).
        found = splat.find_splats(load("console-kasan.log"))
        self.assertEqual(found[0][0], "KASAN")
        self.assertIn("use-after-free", found[0][1])

    def test_qemu_warning_is_not_a_splat(self):
        # QEMU prints "WARNING: Image format was not specified" unstamped.
        qemu_lines = "\n".join(load("console-kasan.log").splitlines()[:5])
        self.assertIn("WARNING: Image format", qemu_lines)
        self.assertEqual(splat.find_splats(qemu_lines), [])

    def test_hung_task_and_soft_lockup(self):
        text = ("[  120.000001] INFO: task kworker/u4:1:37 blocked for more "
                "than 61 seconds.\n"
                "[  130.5] watchdog: BUG: soft lockup - CPU#1 stuck for 22s! "
                "[memhog:812]\n")
        self.assertEqual(self.kinds(text), ["hung task", "soft lockup"])

    def test_user_output_is_not_a_splat(self):
        # A test program printing WARNING without a kernel timestamp.
        text = "WARNING: this is user space\n# BUG: not the kernel\n"
        self.assertEqual(splat.find_splats(text), [])

    def test_oom_kill_is_not_a_splat(self):
        text = ("[   50.1] memhog invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL)"
                ", order=0, oom_score_adj=0\n"
                "[   50.2] Call Trace:\n"
                "[   50.3] Memory cgroup out of memory: Killed process 99\n")
        self.assertEqual(splat.find_splats(text), [])

    def test_interleaved_line(self):
        # Console output of the guest can land mid-line.
        text = "# ok 3 test_x[   77.123456] BUG: kernel NULL pointer deref\n"
        self.assertEqual(self.kinds(text), ["BUG"])

    def test_context_keeps_the_whole_trace(self):
        # A hung task report names the lock and its owner only after the
        # waiter's trace: the context must reach the report's last frame.
        lines = ["INFO: task khugepaged:47 blocked for more than 61 seconds.",
                 "      Not tainted 7.3.4+ #1",
                 "task:khugepaged      state:D stack:0     pid:47",
                 "Call Trace:", "<TASK>"]
        lines += [f" frame_{n}+0x10/0x20" for n in range(12)]
        lines += ["</TASK>",
                  "INFO: task khugepaged:47 is blocked on a mutex likely "
                  "owned by task kworker/u8:2:90.",
                  "task:kworker/u8:2    state:R  running task",
                  "Call Trace:", "<TASK>", " owner_frame+0x1/0x2", "</TASK>",
                  "memhog invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL)"]
        text = "".join(f"[  {120 + n}.000000] {line}\n"
                       for n, line in enumerate(lines))
        (kind, first, context), = splat.find_splats(text)
        self.assertEqual(kind, "hung task")
        self.assertIn(" frame_11+0x10/0x20", context)
        self.assertIn(" owner_frame+0x1/0x2", context)
        self.assertNotIn("oom-killer", "".join(context))

    def test_context_stops_at_the_next_splat(self):
        text = ("[    1.0] WARNING: CPU: 0 PID: 1 at mm/x.c:1 f+0x1/0x2\n"
                "[    1.1] Call Trace:\n[    1.2] <TASK>\n"
                "[    1.3] WARNING: CPU: 1 PID: 2 at mm/y.c:2 g+0x1/0x2\n"
                "[    1.4] </TASK>\n")
        found = splat.find_splats(text)
        self.assertEqual(len(found), 2)
        self.assertNotIn("WARNING: CPU: 1", "".join(found[0][2]))

    def test_format_names_the_splat(self):
        text = "[    1.000000] WARNING: CPU: 0 PID: 1 at mm/x.c:1 f+0x1/0x2\n"
        out = splat.format_splats(splat.find_splats(text))
        self.assertIn("kernel splat (WARNING): WARNING: CPU: 0", out)

    def test_format_counts_repeats_once(self):
        text = "".join(
            f"[    {i}.000000] WARNING: CPU: {i % 2} PID: {100 + i} at "
            "mm/x.c:1 f+0x1/0x2\n" for i in range(1, 6))
        text += "[    9.000000] WARNING: CPU: 0 PID: 7 at mm/y.c:2 g+0x1/0x2\n"
        out = splat.format_splats(splat.find_splats(text)).splitlines()
        heads = [line for line in out if line.startswith("kernel splat")]
        self.assertEqual(len(heads), 2)
        self.assertIn("(5 times): WARNING: CPU: 1 PID: 101 at mm/x.c:1",
                      heads[0])
        self.assertIn("WARNING: CPU: 0 PID: 7 at mm/y.c:2", heads[1])


if __name__ == "__main__":
    unittest.main()
