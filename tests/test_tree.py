import unittest

from harness import tree
from harness.common import HarnessError

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


GENERATED = """\
From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
From: A U Thor <a@example.org>
Date: Tue, 1 Dec 2026 10:00:00 +0000
Subject: [PATCH 0/2] *** SUBJECT HERE ***

*** BLURB HERE ***

A U Thor (2):
  mm: one
  mm: two

 mm/x.c | 2 ++
 1 file changed, 2 insertions(+)
"""


class CoverLetterTest(unittest.TestCase):
    def test_fills_subject_body_and_date(self):
        out = tree.fill_cover_letter(
            GENERATED, "mm: a feature\n\nWhy.\nDate: in the body\n\n",
            "Fri, 27 Nov 2026 20:13:37 +0000")
        self.assertIn("Subject: [PATCH 0/2] mm: a feature\n", out)
        self.assertIn("\nDate: Fri, 27 Nov 2026 20:13:37 +0000\n", out)
        self.assertNotIn("Tue, 1 Dec", out)
        self.assertIn("\n\nWhy.\nDate: in the body\n\nA U Thor (2):\n",
                      out)
        self.assertNotIn("***", out)

    def test_refuses_a_source_without_subject_line(self):
        for source in ("no blank line after the subject\nbody\n",
                       "\n\nbody\n",
                       "two\nlines\n\nbody\n"):
            with self.subTest(source=source):
                with self.assertRaises(HarnessError):
                    tree.fill_cover_letter(GENERATED, source, "d")

    def test_refuses_git_output_without_placeholders(self):
        with self.assertRaises(HarnessError):
            tree.fill_cover_letter(
                GENERATED.replace("*** BLURB HERE ***", "text"),
                "s\n\nb\n", "d")


if __name__ == "__main__":
    unittest.main()
