#!/usr/bin/env python3
"""Tests scripts/regs-survey.py: two wpipe3d shapes of j3d7pt compiled with NVRTC (no GPU), each
row holding the model's estimate, the cap its threads x blocks per SM leave, and ptxas' figures.

  regs_survey_test.py TBTUNE
"""
import csv
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SURVEY = os.path.join(ROOT, "scripts", "regs-survey.py")
TBTUNE = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(ROOT, "build", "tbtune")


class RegsSurvey(unittest.TestCase):
    def test_two_shapes_near_the_cap(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "regs.csv")
            spec = os.path.join(ROOT, "configs", "j3d7pt.yaml")
            run = subprocess.run([sys.executable, SURVEY, "-b", os.path.dirname(TBTUNE), "-o", out, "--per-config", "2",
                                  "--jobs", "2", f"{spec}:572x216x2560"], capture_output=True, text=True)
            self.assertEqual(run.returncode, 0, run.stderr)
            with open(out, newline="") as f:
                rows = list(csv.DictReader(f))
        self.assertEqual(len(rows), 2)
        for r in rows:
            params = dict(kv.split("=") for kv in r["params"].split(";"))
            threads = int(params["warps"]) * int(params["wy"]) * 32
            self.assertEqual(int(r["cap"]), min(255, 65536 // (threads * int(params["bps"])) // 8 * 8))
            # The band's two ends: estimates from half the cap to 1.7x it.
            self.assertGreaterEqual(int(r["estimate"]), int(r["cap"]) // 2)
            self.assertLessEqual(int(r["estimate"]), 1.7 * int(r["cap"]))
            self.assertGreater(int(r["registers"]), 0)
            self.assertLessEqual(int(r["registers"]), int(r["cap"]))  # ptxas holds to the launch bounds
            self.assertGreaterEqual(int(r["spill_bytes"]), 0)
        self.assertLess(int(rows[0]["estimate"]) / int(rows[0]["cap"]), int(rows[1]["estimate"]) / int(rows[1]["cap"]))


if __name__ == "__main__":
    unittest.main()
