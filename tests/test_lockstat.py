"""Tests of harness/lockstat.py: reading a /proc/lock_stat table."""

import json
import os
import tempfile
import unittest

from harness import lockstat

# As 7.3's lockdep_proc.c prints it: an rwsem with both modes, a spinlock
# with one line, contention points below a class, times in microseconds.
TABLE = """\
lock_stat version 0.4
-------------------------------------------------------------------------
                              class name    con-bounces    contentions   waittime-min   waittime-max waittime-total   waittime-avg    acq-bounces   acquisitions   holdtime-min   holdtime-max holdtime-total   holdtime-avg
-------------------------------------------------------------------------

                      &mm->mmap_lock-W:            12             15           0.50        2000.25        3000.00         200.00            40           5000           0.20         900.00       12000.00           2.40
                      &mm->mmap_lock-R:             3              4           1.00         500.00         800.00         200.00            10          20000           0.10         100.00        4000.00           0.20
                        ---------------
                        &mm->mmap_lock              9          [<ffffffff81234567>] lock_mm_and_find_vma+0x2a/0x1b0
                        &mm->mmap_lock             10          [<ffffffff81234999>] walk_mm+0x40/0x120

.............................................................................

                     &lruvec->lru_lock:             5              6           0.30          40.00         100.00          16.66            30           9000           0.10          50.00         700.00           0.07
                     ---------------
                     &lruvec->lru_lock              6          [<ffffffff81300000>] folio_lruvec_lock_irq+0x1c/0x40

                 &sb->s_type->i_mmap_rwsem_key#3-R:  0              0           0.00           0.00           0.00           0.00             2            300           0.50          10.00          50.00           0.16
"""


class ParseTest(unittest.TestCase):
    def test_modes_of_a_class_add_up(self):
        c = lockstat.parse(TABLE)["&mm->mmap_lock"]
        self.assertEqual(c["contentions"], 19)
        self.assertAlmostEqual(c["wait_us"], 3800.0)
        self.assertAlmostEqual(c["wait_max_us"], 2000.25)
        self.assertEqual(c["acquisitions"], 25000)
        self.assertAlmostEqual(c["hold_us"], 16000.0)

    def test_contention_points_are_not_classes(self):
        self.assertEqual(sorted(lockstat.parse(TABLE)),
                         ["&lruvec->lru_lock", "&mm->mmap_lock",
                          "&sb->s_type->i_mmap_rwsem_key#3"])

    def test_figures_of_watched_classes_and_all(self):
        f = lockstat.figures(lockstat.parse(TABLE))
        self.assertAlmostEqual(f["lockwait_ms_mmap_lock"], 3.8)
        self.assertAlmostEqual(f["lockwait_max_ms_mmap_lock"], 2.00025)
        self.assertEqual(f["contentions_lru_lock"], 6)
        self.assertEqual(f["contentions_i_mmap_rwsem"], 0)
        self.assertEqual(f["lockwait_ms_cgroup_mutex"], 0)
        self.assertAlmostEqual(f["lockwait_ms_all"], 3.9)
        self.assertEqual(f["contentions_all"], 25)

    def test_top_is_longest_wait_first(self):
        names = [n for n, _ in lockstat.top(lockstat.parse(TABLE), 2)]
        self.assertEqual(names, ["&mm->mmap_lock", "&lruvec->lru_lock"])



class ByVariantTest(unittest.TestCase):
    def test_tables_add_up_by_variant_over_trials(self):
        with tempfile.TemporaryDirectory() as run:
            os.mkdir(os.path.join(run, "lockstat"))
            trials = []
            for n, variant in enumerate(["off", "auto", "auto"]):
                name = f"lockstat/{n}.txt"
                with open(os.path.join(run, name), "w",
                          encoding="utf-8") as f:
                    f.write(TABLE)
                trials.append({"variant": variant, "lock_stat_file": name})
            trials.append({"variant": "floor"})    # kept no table
            with open(os.path.join(run, "trials.jsonl"), "w",
                      encoding="utf-8") as f:
                f.writelines(json.dumps(t) + "\n" for t in trials)
            totals = lockstat.by_variant(run)
        self.assertEqual(sorted(totals), ["auto", "off"])
        mmap = totals["auto"]["&mm->mmap_lock"]
        self.assertEqual(mmap["contentions"], 38)
        self.assertAlmostEqual(mmap["wait_us"], 7600.0)
        self.assertAlmostEqual(mmap["wait_max_us"], 2000.25)
        self.assertEqual(totals["off"]["&mm->mmap_lock"]["contentions"], 19)


if __name__ == "__main__":
    unittest.main()
