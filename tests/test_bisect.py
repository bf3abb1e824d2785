import unittest
from types import SimpleNamespace
from unittest import mock

from harness import bisect
from harness.common import HarnessError

COMMITS = ["c1", "c2", "c3"]


def fake_git(base, *args, capture=True):
    if args[0] == "status":
        return ""
    if args[0] == "rev-list":
        return "\n".join(COMMITS)
    if args[:2] == ("rev-parse", "--abbrev-ref"):
        return "work"
    if args[0] == "log":
        return f"subject of {args[-1]}"
    return ""


class BisectCheckTest(unittest.TestCase):
    def run_check(self, broken):
        """bisect.check() over COMMITS, where building `broken` fails."""
        built, booted, checkouts = [], [], []

        def build_at(base, src, out, variant, **kw):
            sha = checkouts[-1]
            built.append(sha)
            if sha == broken:
                raise HarnessError("command failed (2): make bzImage")

        def git(base, *args, capture=True):
            if args[0] == "checkout":
                checkouts.append(args[-1])
            return fake_git(base, *args, capture=capture)

        def boot(base, out, variant, label):
            booted.append(checkouts[-1])
            return []

        base = SimpleNamespace(name="7.3", tree="/nonexistent/linux",
                               out_dir="/nonexistent")
        with mock.patch.object(bisect.tree, "git", git), \
                mock.patch.object(bisect.build, "build_at", build_at), \
                mock.patch.object(bisect, "_boot_check", boot), \
                mock.patch.object(bisect, "log"):
            problems = bisect.check(base, "lean")
        return problems, built, booted, checkouts

    def test_build_failure_is_a_problem_and_the_run_goes_on(self):
        problems, built, booted, checkouts = self.run_check("c2")
        self.assertEqual(built, COMMITS)
        self.assertEqual(booted, ["c1", "c3"])
        self.assertEqual(len(problems), 1)
        self.assertIn("[2/3] subject of c2", problems[0])
        self.assertIn("does not build", problems[0])
        self.assertEqual(checkouts[-1], "work")

    def test_all_build(self):
        problems, built, booted, checkouts = self.run_check(None)
        self.assertEqual(problems, [])
        self.assertEqual(booted, COMMITS)
        self.assertEqual(checkouts[-1], "work")


if __name__ == "__main__":
    unittest.main()
