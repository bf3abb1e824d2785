import unittest

from harness import kconfig


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
        lean = kconfig.requested_options("lean", False)
        debug = kconfig.requested_options("debug", False)
        self.assertEqual(lean["CONFIG_MEMCG"], "y")
        self.assertEqual(debug["CONFIG_KASAN"], "y")
        self.assertTrue(set(lean) <= set(debug))

    def test_unknown_variant(self):
        with self.assertRaises(Exception):
            kconfig.fragment_paths("huge", False)

    def test_series_fragment_only_with_series(self):
        self.assertFalse(any(p.endswith(kconfig.SERIES_FRAGMENT)
                             for p in kconfig.fragment_paths("lean", False)))
        self.assertTrue(kconfig.fragment_paths("debug", True)[-1]
                        .endswith(kconfig.SERIES_FRAGMENT))


if __name__ == "__main__":
    unittest.main()
