import os
import subprocess
import tempfile
import unittest

from harness import bases, guest_run, mutants
from harness.common import HarnessError

DIFF = """diff --git a/mm/x.c b/mm/x.c
--- a/mm/x.c
+++ b/mm/x.c
@@ -1 +1 @@
-a
+b
"""


class MutantTest(unittest.TestCase):
    def write(self, text):
        fd, path = tempfile.mkstemp(suffix=".patch")
        with os.fdopen(fd, "w") as f:
            f.write(text)
        self.addCleanup(os.remove, path)
        return path

    def test_header(self):
        m = mutants.Mutant(self.write("Promise: it works\nProfile: numa\n\n"
                                      + DIFF))
        self.assertEqual(m.promise, "it works")
        self.assertEqual(m.profile, "numa")

    def test_default_profile(self):
        m = mutants.Mutant(self.write("Promise: it works\n\n" + DIFF))
        self.assertEqual(m.profile, "mutant")

    def test_rejected(self):
        for text in ("Profile: numa\n\n" + DIFF,
                     "Promise: no diff\n",
                     "Promise: x\nProfile: nonesuch\n\n" + DIFF):
            with self.assertRaises(HarnessError):
                mutants.Mutant(self.write(text))

    def test_header_lines_in_the_diff_do_not_count(self):
        text = "Promise: p\n\n" + DIFF.replace("+b", "+Profile: numa")
        self.assertEqual(mutants.Mutant(self.write(text)).profile, "mutant")

    def test_every_mutant_loads(self):
        found = mutants.load()
        self.assertGreaterEqual(len(found), 12)
        self.assertEqual(len({m.name for m in found}), len(found))


class TableTest(unittest.TestCase):
    def test_rows_survive_a_rewrite(self):
        fd, path = tempfile.mkstemp(suffix=".md")
        os.close(fd)
        self.addCleanup(os.remove, path)
        old = mutants.TABLE
        mutants.TABLE = path
        self.addCleanup(setattr, mutants, "TABLE", old)
        name = mutants.load()[0].name
        mutants.write_table({name: ("a<br>b (missing)", "2026-11-24, abc")})
        rows = mutants.read_table()
        self.assertEqual(rows[name], ("a<br>b (missing)", "2026-11-24, abc"))
        self.assertEqual(len(rows), len(mutants.load()))
        self.assertTrue(all(r == ("not run", "-") for n, r in rows.items()
                            if n != name))


class CatchersTest(unittest.TestCase):
    # The base with a baseline committed.
    BASE = bases.get("6.12")

    def catchers(self, results, problems=()):
        return mutants.catchers(
            self.BASE, guest_run.SuiteRun(results, {}, {}, list(problems),
                                          "6.12.117+"), "mutant")

    def test_subtest_named_not_its_program(self):
        caught = self.catchers({"test_bgreclaim": "fail",
                                "test_bgreclaim:test_bgr_cpu_max": "fail",
                                "test_bgreclaim:test_bgr_grammar": "pass"})
        self.assertIn("test_bgreclaim:test_bgr_cpu_max", caught)
        self.assertNotIn("test_bgreclaim", caught)

    def test_problems_count(self):
        caught = self.catchers({}, ["the guest did not finish\nmore"])
        self.assertIn("run: the guest did not finish", caught)


class StaleTest(unittest.TestCase):
    """A mutant whose context the series changed no longer applies."""

    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.addCleanup(subprocess.run, ["rm", "-rf", self.dir])
        subprocess.run(["git", "init", "-q", self.dir], check=True)
        os.makedirs(os.path.join(self.dir, "mm"))
        self.source = os.path.join(self.dir, "mm", "x.c")

    def mutant(self):
        fd, path = tempfile.mkstemp(suffix=".patch")
        with os.fdopen(fd, "w") as f:
            f.write("Promise: x is b\n\n" + DIFF)
        self.addCleanup(os.remove, path)
        return mutants.Mutant(path)

    def test_applies(self):
        with open(self.source, "w") as f:
            f.write("a\n")
        m = self.mutant()
        self.assertEqual([], mutants.stale(self.dir, [m]))

    def test_moved_code_is_stale(self):
        with open(self.source, "w") as f:
            f.write("c\n")
        m = self.mutant()
        self.assertEqual([m.name], mutants.stale(self.dir, [m]))
