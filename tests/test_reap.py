import os
import subprocess
import sys
import unittest

REAP = os.path.join(os.path.dirname(__file__), "..", "guest", "reap.py")


class ReapTest(unittest.TestCase):
    def reap(self, script):
        return subprocess.run([sys.executable, REAP, "sh", "-c", script],
                              capture_output=True, text=True, timeout=30)

    def test_orphans_are_adopted_and_reaped(self):
        # The inner shell's child outlives it: an orphan that the
        # subreaper (the command's parent, $PPID) adopts, then reaps when
        # it exits.
        done = self.reap("sh -c 'sleep 0.5 &'; sleep 0.2; "
                         "echo adopted: $(ps -o comm= --ppid $PPID); "
                         "sleep 1; echo left: $(ps -o stat= --ppid $PPID)")
        self.assertEqual(done.returncode, 0, done.stderr)
        adopted, left = done.stdout.splitlines()
        self.assertIn("sleep", adopted)
        # Only this shell itself is left, and not as a zombie.
        self.assertNotIn("Z", left)

    def test_exit_code_is_the_commands(self):
        self.assertEqual(self.reap("exit 3").returncode, 3)

    def test_missing_command(self):
        done = subprocess.run([sys.executable, REAP, "/nonexistent"],
                              capture_output=True, text=True, timeout=30)
        self.assertEqual(done.returncode, 127)
        self.assertIn("/nonexistent", done.stderr)


if __name__ == "__main__":
    unittest.main()
