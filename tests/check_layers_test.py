#!/usr/bin/env python3
"""Tests of scripts/check-layers.py: the project passes, and each kind of planted violation in a
copy of its sources fails with the offending file and line."""
import pathlib
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = pathlib.Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "check-layers.py"
COPIED = ["tuner", "model", "db", "cli", "include", "templates", "tests"]


def run(root):
    p = subprocess.run([sys.executable, str(SCRIPT), "--root", str(root)], capture_output=True,
                       text=True, timeout=60)
    return p.returncode, p.stdout + p.stderr


class CheckLayers(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = pathlib.Path(self.tmp.name)
        for d in COPIED:
            shutil.copytree(ROOT / d, self.root / d,
                            ignore=shutil.ignore_patterns("*.yaml", "*.txt", "*.py"))

    def tearDown(self):
        self.tmp.cleanup()

    def append(self, rel, text):
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = path.read_text().count("\n") if path.exists() else 0
        with path.open("a") as f:
            f.write(text)
        return lines + 1  # the line the planted text starts on

    def test_project_passes(self):
        rc, out = run(ROOT)
        self.assertEqual(rc, 0, out)
        rc, out = run(self.root)
        self.assertEqual(rc, 0, out)

    def test_upward_include_fails_with_file_and_line(self):
        line = self.append("tuner/spec/expr.hpp", '#include "tuner/search/engine.hpp"\n')
        rc, out = run(self.root)
        self.assertEqual(rc, 1, out)
        self.assertIn(f"tuner/spec/expr.hpp:{line}:", out)
        self.assertIn("upward include", out)
        self.assertIn("layer spec (rank 1) includes layer search (rank 7)", out)

    def test_model_including_codegen_fails(self):
        self.append("model/model.cpp", '#include "tuner/codegen/strategy.hpp"\n')
        rc, out = run(self.root)
        self.assertEqual(rc, 1, out)
        self.assertIn("model/model.cpp:", out)

    def test_cache_including_engine_fails(self):
        self.append("db/cache.cpp", '#include "tuner/search/engine.hpp"\n')
        rc, out = run(self.root)
        self.assertEqual(rc, 1, out)
        self.assertIn("layer cache (rank 6) includes layer search (rank 7)", out)

    def test_sideways_include_fails(self):
        self.append("tuner/report/report.cpp", '#include "tbtune/tbtune.hpp"\n')
        rc, out = run(self.root)
        self.assertEqual(rc, 1, out)
        self.assertIn("sideways include", out)

    def test_folders_of_one_layer_including_each_other_fail(self):
        self.append("tuner/api/detail.hpp", '#pragma once\n#include "tbtune/tbtune.hpp"\n')
        self.append("include/tbtune/tbtune.hpp", '#include "tuner/api/detail.hpp"\n')
        rc, out = run(self.root)
        self.assertEqual(rc, 1, out)
        self.assertIn("include each other", out)

    def test_unowned_folder_and_missing_file_fail(self):
        self.append("tuner/misc/helper.cpp", '#include "tuner/spec/expr.hpp"\n')
        self.append("tuner/spec/expr.cpp", '#include "tuner/spec/no_such.hpp"\n')
        rc, out = run(self.root)
        self.assertEqual(rc, 1, out)
        self.assertIn("tuner/misc/helper.cpp: in a folder that no layer owns", out)
        self.assertIn("names no file of the project", out)

    def test_library_including_a_test_file_fails(self):
        self.append("tuner/spec/spec.cpp", '#include "tests/test_util.hpp"\n')
        rc, out = run(self.root)
        self.assertEqual(rc, 1, out)
        self.assertIn("library code includes a test file", out)

    def test_tests_may_include_any_layer_but_must_mirror_a_folder(self):
        self.append("tests/spec/any_test.cpp", '#include "tuner/search/engine.hpp"\n')
        rc, out = run(self.root)
        self.assertEqual(rc, 0, out)
        self.append("tests/misc/other_test.cpp", '#include "tuner/spec/expr.hpp"\n')
        rc, out = run(self.root)
        self.assertEqual(rc, 1, out)
        self.assertIn("tests/misc/ mirrors no layer's folder", out)


if __name__ == "__main__":
    unittest.main()
