"""Tests of harness/stalls.py: attributing a traced trial's slow requests."""

import unittest

from harness import stalls

# memcached's thread 100 serves the connection on CPU 0.  At 10.100 a
# kworker running background reclaim preempts it; it gets the CPU back at
# 10.160, blocks at 10.170 and is woken at 10.190; CPU 1 is idle
# throughout but for the client.
TRACE = """\
# tracer: nop
 memcached-100   [000] d..2.  10.000000: sched_switch: prev_comm=memcached prev_pid=100 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
    <idle>-0     [000] d..2.  10.050000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=memcached next_pid=100 next_prio=120
    <idle>-0     [001] d..2.  10.050000: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=mcload next_pid=200 next_prio=120
 memcached-100   [000] d..2.  10.100000: sched_switch: prev_comm=memcached prev_pid=100 prev_prio=120 prev_state=R+ ==> next_comm=kworker/u8:1 next_pid=300 next_prio=120
 kworker/u8:1-300 [000] ..... 10.100000: mm_vmscan_memcg_bgreclaim_begin: cgroup_id=7 usage=1 high_wmark=1 low_wmark=1
 kworker/u8:1-300 [000] ..... 10.150000: mm_vmscan_memcg_bgreclaim_end: cgroup_id=7 nr_reclaimed=1 usage=1 cpu_ns=1 duration_ns=1 stop=done
 kworker/u8:1-300 [000] d..2.  10.160000: sched_switch: prev_comm=kworker/u8:1 prev_pid=300 prev_prio=120 prev_state=I ==> next_comm=memcached next_pid=100 next_prio=120
 memcached-100   [000] d..2.  10.170000: sched_switch: prev_comm=memcached prev_pid=100 prev_prio=120 prev_state=D ==> next_comm=swapper/0 next_pid=0 next_prio=120
    mcload-200   [001] d..2.  10.190000: sched_wakeup: comm=memcached pid=100 prio=120 target_cpu=000
    <idle>-0     [000] d..2.  10.200000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=memcached next_pid=100 next_prio=120
 kworker/u8:1-300 [000] ..... 10.300000: mm_vmscan_lru_shrink_inactive: nid=0 nr_scanned=32 nr_reclaimed=20 nr_dirty=2 nr_writeback=0 nr_congested=0 nr_immediate=0 nr_activate_anon=0 nr_activate_file=5 nr_ref_keep=0 nr_unmap_fail=0 priority=12 flags=RECLAIM_WB_FILE|RECLAIM_WB_ASYNC
 kworker/u8:1-300 [000] ..... 10.310000: mm_vmscan_lru_shrink_inactive: nid=0 nr_scanned=8 nr_reclaimed=8 nr_dirty=0 nr_writeback=0 nr_congested=0 nr_immediate=0 nr_activate_anon=1 nr_activate_file=0 nr_ref_keep=0 nr_unmap_fail=0 priority=12 flags=RECLAIM_WB_ANON|RECLAIM_WB_ASYNC
 memcached-100   [000] ..... 10.320000: mm_vmscan_lru_shrink_inactive: nid=0 nr_scanned=4 nr_reclaimed=4 nr_dirty=0 nr_writeback=0 nr_congested=0 nr_immediate=0 nr_activate_anon=0 nr_activate_file=0 nr_ref_keep=0 nr_unmap_fail=0 priority=12 flags=RECLAIM_WB_FILE|RECLAIM_WB_ASYNC
"""


class StallTest(unittest.TestCase):
    def test_overlapping_slow_requests_are_one_stall(self):
        # 1000 requests a second from 10 s: requests 100 and 101 (due at
        # 10.100 and 10.101) wait 100 ms, the others 1 ms.
        lat = [1000.0] * 200
        lat[100] = lat[101] = 100000.0
        windows = stalls.stall_windows(lat, 10e6, 1000, 50000)
        self.assertEqual(len(windows), 1)
        self.assertAlmostEqual(windows[0][0], 10.100)
        self.assertAlmostEqual(windows[0][1], 10.201)

    def test_states_cpus_and_reclaim_over_the_stall(self):
        states, cpu, reclaim = stalls.attribute(
            stalls.parse(TRACE), {100}, [(10.100, 10.200)])
        self.assertAlmostEqual(states["runnable"], 0.060 + 0.010)
        self.assertAlmostEqual(states["running"], 0.010)
        self.assertAlmostEqual(states["blocked"], 0.020)
        self.assertAlmostEqual(cpu["kworker/u8:1"], 0.060)
        self.assertAlmostEqual(cpu["mcload"], 0.100)
        self.assertAlmostEqual(cpu["idle"], 0.030)
        self.assertAlmostEqual(reclaim["background"], 0.050)
        self.assertNotIn("direct", reclaim)

    def test_scans_by_reclaimer_and_list(self):
        totals = stalls.shrink_totals(stalls.parse(TRACE), {100})
        self.assertEqual(totals["background"]["file"],
                         {"scanned": 32, "reclaimed": 20, "activated": 5,
                          "dirty": 2})
        self.assertEqual(totals["background"]["anon"]["reclaimed"], 8)
        self.assertEqual(totals["memcached"]["file"]["scanned"], 4)
        self.assertNotIn("other", totals)

    def test_nothing_outside_the_stalls_counts(self):
        states, cpu, reclaim = stalls.attribute(
            stalls.parse(TRACE), {100}, [(9.0, 9.5)])
        self.assertFalse(any(states.values()))
        self.assertFalse(any(cpu.values()))
        self.assertFalse(any(reclaim.values()))


# The worker (300) removes pages 0-1 of file 0x2a (a two-page folio) and
# page 5 of file 0x2b; the reader (400) adds pages 0 and 1 of 0x2a back
# and a page 9 never removed; memcached (100) removes page 7 of 0x2b.
CHURN = """\
 kworker/u8:1-300 [000] ..... 10.100000: mm_vmscan_memcg_bgreclaim_begin: cgroup_id=7 usage=1 high_wmark=1 low_wmark=1
 kworker/u8:1-300 [000] ..... 10.110000: mm_filemap_delete_from_page_cache: dev 254:16 ino 2a pfn=0x100 ofs=0 order=1
 kworker/u8:1-300 [000] ..... 10.120000: mm_filemap_delete_from_page_cache: dev 254:16 ino 2b pfn=0x200 ofs=20480 order=0
 memcached-100   [001] ..... 10.130000: mm_filemap_delete_from_page_cache: dev 254:16 ino 2b pfn=0x300 ofs=28672 order=0
 pacedread-400   [001] ..... 10.200000: mm_filemap_add_to_page_cache: dev 254:16 ino 2a pfn=0x400 ofs=0 order=0
 pacedread-400   [001] ..... 10.210000: mm_filemap_add_to_page_cache: dev 254:16 ino 2a pfn=0x401 ofs=4096 order=0
 pacedread-400   [001] ..... 10.220000: mm_filemap_add_to_page_cache: dev 254:16 ino 2a pfn=0x402 ofs=36864 order=0
 pacedread-400   [001] ..... 10.230000: mm_filemap_add_to_page_cache: dev 254:16 ino 2a pfn=0x403 ofs=0 order=0
"""


class PageCacheTest(unittest.TestCase):
    def test_pages_read_again_and_who_removed_them(self):
        churn = stalls.page_cache_churn(stalls.parse(CHURN))
        self.assertEqual(churn[("254:16", 0x2a)],
                         {"added": 4, "read_again": 2,
                          "removed_background": 2, "removed_other": 0})
        self.assertEqual(churn[("254:16", 0x2b)],
                         {"added": 0, "read_again": 0,
                          "removed_background": 1, "removed_other": 1})


    def test_a_file_is_named_by_device_and_inode_else_by_inode(self):
        names = {("254:16", 12): "/scratch/data", ("0:42", 77): "/bin/head",
                 ("0:42", 12): "/bin/sleep"}
        self.assertEqual(stalls._file_name(names, ("254:16", 12)),
                         "/scratch/data")
        self.assertEqual(stalls._file_name(names, ("0:20", 77)),
                         "/bin/head (by inode)")
        self.assertEqual(stalls._file_name(names, ("0:20", 12)),
                         "0:20 inode 12")


if __name__ == "__main__":
    unittest.main()
