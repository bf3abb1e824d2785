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


if __name__ == "__main__":
    unittest.main()
