import os
import shutil
import tempfile
import unittest

from harness import bases, build, kconfig
from harness.common import HarnessError


class KconfigTest(unittest.TestCase):
    def test_parse(self):
        text = ("CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_C=\"x y\"\n"
                "# a comment\nCONFIG_D=8\n")
        self.assertEqual(kconfig.parse_config(text),
                         {"CONFIG_A": "y", "CONFIG_B": "n",
                          "CONFIG_C": '"x y"', "CONFIG_D": "8"})

    def test_unmet_reports_dropped_and_changed(self):
        requested = {"CONFIG_A": "y", "CONFIG_B": "y", "CONFIG_C": "n",
                     "CONFIG_D": "8"}
        actual = {"CONFIG_A": "y", "CONFIG_D": "4"}
        self.assertEqual(kconfig.unmet_options(requested, actual),
                         [("CONFIG_B", "y", "n"), ("CONFIG_D", "8", "4")])

    def test_fragments_parse_and_debug_extends_lean(self):
        for base in bases.load().values():
            with self.subTest(base=base.name):
                lean = kconfig.requested_options(base, "lean", False)
                debug = kconfig.requested_options(base, "debug", False)
                self.assertEqual(lean["CONFIG_MEMCG"], "y")
                self.assertEqual(debug["CONFIG_KASAN"], "y")
                self.assertTrue(set(lean) <= set(debug))

    def test_unknown_variant(self):
        with self.assertRaises(HarnessError):
            kconfig.fragment_paths(bases.get(), "huge", False)

    def test_series_fragment_only_with_series(self):
        base = bases.get()
        self.assertFalse(any(p.endswith(kconfig.SERIES_FRAGMENT)
                             for p in kconfig.fragment_paths(base, "lean",
                                                             False)))
        self.assertTrue(kconfig.fragment_paths(base, "debug", True)[-1]
                        .endswith(kconfig.SERIES_FRAGMENT))


class BaseFragmentTest(unittest.TestCase):
    """Each base's own fragment, merged right after lean.config."""

    def names(self, base, variant, with_series):
        return [os.path.basename(p) for p in
                kconfig.fragment_paths(bases.get(base), variant, with_series)]

    def test_order(self):
        self.assertEqual(self.names("7.3", "lean", False),
                         ["lean.config", "7.3.config"])
        self.assertEqual(self.names("6.12", "debug", True),
                         ["lean.config", "6.12.config", "debug.config",
                          "series.config"])

    def test_preemption_as_distributions_ship_it(self):
        mainline = kconfig.requested_options(bases.get("7.3"), "lean", False)
        backport = kconfig.requested_options(bases.get("6.12"), "lean", False)
        for options, model in ((mainline, "CONFIG_PREEMPT_LAZY"),
                               (backport, "CONFIG_PREEMPT_VOLUNTARY")):
            for option in (model, "CONFIG_PREEMPT_DYNAMIC"):
                self.assertEqual(options[option], "y")
            # TCG runs patched static-key sites stale (lean.config).
            self.assertEqual(options["CONFIG_JUMP_LABEL"], "n")

    def test_options_7_3_lacks_are_6_12s_own(self):
        mainline = kconfig.requested_options(bases.get("7.3"), "debug", True)
        backport = kconfig.requested_options(bases.get("6.12"), "lean", False)
        for option in ("CONFIG_PROC_SYSCTL",
                       "CONFIG_ZSWAP_ZPOOL_DEFAULT_ZSMALLOC"):
            self.assertNotIn(option, mainline)
            self.assertEqual(backport[option], "y")


class ConfigStampTest(unittest.TestCase):
    """A build directory's .config is remade when its fragment list
    changes, as it does between bases or when a series appears."""

    def test_another_list_is_not_current(self):
        out = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, out)
        frags = kconfig.fragment_paths(bases.get("7.3"), "lean", False)
        with open(os.path.join(out, "harness-fragments"), "w") as f:
            f.write("\n".join(frags))
        with open(os.path.join(out, ".config"), "w") as f:
            f.write("CONFIG_A=y\n")
        self.assertTrue(build._config_is_current(out, frags))
        for other in (kconfig.fragment_paths(bases.get("6.12"), "lean",
                                             False),
                      kconfig.fragment_paths(bases.get("7.3"), "lean",
                                             True)):
            self.assertFalse(build._config_is_current(out, other))


if __name__ == "__main__":
    unittest.main()
