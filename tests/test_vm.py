import unittest

from harness import vm
from harness.common import HarnessError


class NumaGuestTest(unittest.TestCase):
    def test_nodes_share_cpus_and_memory_evenly(self):
        self.assertEqual(vm.numa_options(2, 2, 4),
                         ["--numa", "2G,cpus=0", "--numa", "2G,cpus=1"])
        self.assertEqual(vm.numa_options(2, 4, 4),
                         ["--numa", "2G,cpus=0-1", "--numa", "2G,cpus=2-3"])

    def test_uneven_split_is_refused(self):
        with self.assertRaises(HarnessError):
            vm.numa_options(2, 3, 4)
        with self.assertRaises(HarnessError):
            vm.numa_options(3, 3, 4)

    def test_a_socket_per_node(self):
        self.assertEqual(vm.smp_topology(2, 1), "2")
        self.assertEqual(vm.smp_topology(4, 2),
                         "4,sockets=2,cores=2,threads=1")


class GuestCommandTest(unittest.TestCase):
    def test_words_joined(self):
        self.assertTrue(vm.guest_command(["a.sh", "1", "x,y"]).endswith(
            "reap.py a.sh 1 x,y"))

    def test_empty_or_blank_argument_refused(self):
        for arg in ("", "a b", "a\tb"):
            with self.assertRaises(HarnessError):
                vm.guest_command(["a.sh", arg])


class TimeoutReportTest(unittest.TestCase):
    def test_splats_and_last_lines_shown(self):
        lines = [f"line {i}\n" for i in range(100)]
        lines[10] = "[   12.5] INFO: task bash:42 blocked for more than 60 seconds.\n"
        report = vm.timeout_report(60, "c.log", lines)
        self.assertIn("killed after 60s", report)
        self.assertIn("kernel splat (hung task)", report)
        self.assertIn("  line 99", report)
        self.assertIn(f"  line {100 - vm.TIMEOUT_TAIL_LINES}", report)
        self.assertNotIn(f"  line {99 - vm.TIMEOUT_TAIL_LINES}\n", report)

    def test_no_splat_no_splat_line(self):
        report = vm.timeout_report(5, "c.log", ["running stress-kswapd\n"])
        self.assertNotIn("splat", report)
        self.assertTrue(report.endswith("  running stress-kswapd"))


if __name__ == "__main__":
    unittest.main()
