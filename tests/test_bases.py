import os
import unittest

from harness import bases
from harness.common import BUILD, REPO, HarnessError

PIN = "0123456789abcdef" * 4
SECTION = f"""\
package=linux-source-{{name}}
version={{name}}.1-1
archive=http://deb.debian.org/debian
suite=trixie-backports
component=main
deb_sha256={PIN}
tarball=usr/src/linux-source-{{name}}.tar.xz
tarball_sha256={PIN}
fragment={{name}}.config
series={{series}}
trace_at_boot={{trace}}
"""


def conf(default="7.3"):
    return (f"# comment\ndefault={default}\n\n[6.12]\n"
            + SECTION.format(name="6.12", series="backports/6.12",
                             trace="no")
            + "\n[7.3]\n" + SECTION.format(name="7.3", series="patches",
                                              trace="yes"))


class ParseTest(unittest.TestCase):
    def test_both_sections_default_first(self):
        found = bases.parse(conf())
        self.assertEqual(list(found), ["7.3", "6.12"])
        base = found["6.12"]
        self.assertEqual(base.package, "linux-source-6.12")
        self.assertEqual(base.label, "linux-source-6.12 6.12.1-1")
        self.assertEqual(base.fragment, "6.12.config")
        self.assertFalse(base.trace_at_boot)
        self.assertTrue(found["7.3"].trace_at_boot)
        self.assertEqual(base.series_dir,
                         os.path.join(REPO, "backports", "6.12"))
        self.assertEqual(base.baseline_dir,
                         os.path.join(REPO, "baseline", "6.12"))
        self.assertEqual(base.tree, os.path.join(BUILD, "6.12", "linux"))
        self.assertEqual(base.unpatched_tree,
                         os.path.join(BUILD, "6.12", "linux-base"))
        self.assertEqual(base.tarball_path, os.path.join(
            BUILD, "6.12", "source", "usr/src/linux-source-6.12.tar.xz"))

    def test_default_names_the_first(self):
        self.assertEqual(list(bases.parse(conf("6.12"))), ["6.12", "7.3"])

    def test_malformed(self):
        good = conf()
        cases = {
            "no default": good.replace("default=7.3\n", ""),
            "default of no section": good.replace("default=7.3",
                                                  "default=7.4"),
            "two defaults": "default=6.12\n" + good,
            "key before a section": "package=x\n" + good,
            "line without =": good.replace("component=main", "component"),
            "empty value": good.replace("component=main", "component="),
            "unknown key": good + "arch=amd64\n",
            "repeated key": good + "suite=sid\n",
            "repeated section": good + "[7.3]\n",
            "missing key": good.replace("series=patches\n", ""),
            "bad hash": good.replace(f"deb_sha256={PIN}", "deb_sha256=abc"),
            "trace_at_boot not yes or no":
                good.replace("trace_at_boot=no", "trace_at_boot=1"),
        }
        for what, text in cases.items():
            with self.subTest(what), self.assertRaises(HarnessError) as err:
                bases.parse(text, "base.conf")
            self.assertIn("base.conf", str(err.exception))


class PinnedTest(unittest.TestCase):
    """The committed base.conf."""

    def test_pins(self):
        found = bases.load()
        self.assertEqual(list(found), ["7.3", "6.12"])
        self.assertEqual(bases.get(), found["7.3"])
        mainline, backport = found["7.3"], found["6.12"]
        self.assertEqual(mainline.label, "linux-source-7.3 7.3.4-1~bpo13+1")
        self.assertEqual(mainline.series_dir, os.path.join(REPO, "patches"))
        self.assertEqual(backport.label,
                         "linux-source-6.12 6.12.117-1~deb12u1")
        self.assertEqual(backport.series_dir,
                         os.path.join(REPO, "backports", "6.12"))

    def test_files_it_names_exist(self):
        for base in bases.load().values():
            with self.subTest(base=base.name):
                self.assertTrue(os.path.exists(
                    os.path.join(REPO, "configs", base.fragment)))
                self.assertTrue(os.path.exists(
                    os.path.join(base.series_dir, "series")))

    def test_unknown_name(self):
        with self.assertRaises(HarnessError):
            bases.get("5.15")


if __name__ == "__main__":
    unittest.main()


class BootTraceEventsTest(unittest.TestCase):
    def test_only_where_the_series_expects_them(self):
        from harness import guest_run
        found = bases.parse(conf())
        self.assertEqual(guest_run.boot_trace_events(found["7.3"], False),
                         guest_run.SERIES_TRACE_EVENTS)
        self.assertEqual(guest_run.boot_trace_events(found["7.3"], True), ())
        self.assertEqual(guest_run.boot_trace_events(found["6.12"], False),
                         ())
