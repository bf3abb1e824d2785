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


if __name__ == "__main__":
    unittest.main()
