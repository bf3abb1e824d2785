import unittest

from harness import deps, tree

GITIGNORE_TAIL = """\
# Rust analyzer configuration
/rust-project.json

#
# Debian packaging: ignore everything at the top level, since it isn't
# included in our repository
#
/*
!/debian/
"""


class StripDebianBlockTest(unittest.TestCase):
    def test_strips_block(self):
        out = tree.strip_debian_ignore_block(GITIGNORE_TAIL)
        self.assertEqual(out, "# Rust analyzer configuration\n"
                              "/rust-project.json\n")

    def test_leaves_other_files_alone(self):
        text = "*.o\n/build/\n"
        self.assertEqual(tree.strip_debian_ignore_block(text), text)


class BaseConfTest(unittest.TestCase):
    def test_pinned_base(self):
        conf = deps.read_base_conf()
        self.assertEqual(conf["package"], "linux-source-6.12")
        self.assertEqual(conf["version"], "6.12.117-1~deb12u1")
        self.assertRegex(conf["sha256"], r"^[0-9a-f]{64}$")


if __name__ == "__main__":
    unittest.main()
