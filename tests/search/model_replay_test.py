#!/usr/bin/env python3
"""Tests scripts/model-replay.py against the tbtune it replays: slices whose measurements are
made up from the model's own ranking, so each test knows which shapes the search must time.

  model_replay_test.py TBTUNE
"""
import csv
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REPLAY = os.path.join(ROOT, "scripts", "model-replay.py")
TBTUNE = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(ROOT, "build", "tbtune")
DOMAIN = "572x216x2560"
SLICE = {"bps": 1, "wy": 4, "warps": 2, "fold": 0}


def text(params):
    return ";".join(f"{k}={v}" for k, v in sorted(params.items()))


def ranking():
    cmd = [TBTUNE, "model", os.path.join(ROOT, "configs", "j3d7pt.yaml"), "--domain", DOMAIN, "--profile", "h200",
           "--strategy", "wpipe3d", "--steps", "100", "--top", "1000000", "--json"]
    out = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
    return [c for c in out["candidates"] if all(c["params"][k] == v for k, v in SLICE.items())]


class ModelReplay(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.ranked = ranking()
        # What the model search chooses from, by prediction (shapes over the register estimate
        # within wpipe3d's slack included).
        cls.primaries = sorted((c for c in cls.ranked if c["model_search_may_choose"]), key=lambda c: -c["PP_gcells"])
        cls.tmp = tempfile.TemporaryDirectory()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def replay(self, trials):
        """Writes `trials` (params -> (status, gcells)) as run 1 and replays it."""
        path = os.path.join(self.tmp.name, "trials.csv")
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["run", "config", "domain", "dtype", "strategy", "params", "status", "gcells"])
            for params, (status, gcells) in trials.items():
                w.writerow([1, "j3d7pt", DOMAIN, "double", "wpipe3d", params, status, gcells])
        run = subprocess.run([sys.executable, REPLAY, "-b", os.path.dirname(TBTUNE), path, "--run", "1", "--config",
                              "j3d7pt", "--strategy", "wpipe3d", "--steps", "100", "--json"],
                             capture_output=True, text=True)
        return run.returncode, (json.loads(run.stdout) if run.stdout else None), run.stderr

    def replay_db(self, trials, steps=100):
        """The same trials as `tbtune db show j3d7pt --json` prints them, one stored problem."""
        path = os.path.join(self.tmp.name, "show.json")
        entry = {"stencil": "j3d7pt", "hash": "10c9c173f743596f", "device": "NVIDIA H200|9.0|132", "dtype": "double",
                 "domain": [572, 216, 2560], "steps": steps, "steps_class": steps, "trial": {}, "created_at": "",
                 "tool_version": "", "trials": []}
        for params, (status, gcells) in trials.items():
            entry["trials"].append({"strategy": "wpipe3d", "params": {k: int(v) for k, v in
                                                                       (kv.split("=") for kv in params.split(";"))},
                                    "status": status, "gcells": gcells, "registers": 0, "spill_bytes": 0})
        with open(path, "w") as f:
            json.dump([entry], f)
        run = subprocess.run([sys.executable, REPLAY, "-b", os.path.dirname(TBTUNE), path, "--config", "j3d7pt",
                              "--strategy", "wpipe3d", "--json"], capture_output=True, text=True)
        return run.returncode, (json.loads(run.stdout) if run.stdout else None), run.stderr

    def measured_as_predicted(self):
        """Every shape of the slice measured at its prediction, and spilled where the model says it
        does not fit and its search may not choose it: the model is right."""
        return {text(c["params"]): ("ok", c["PP_gcells"]) if c["fits"] or c["model_search_may_choose"]
                else ("skipped", 0.0) for c in self.ranked}

    def test_the_model_right_times_the_best(self):
        rc, out, _ = self.replay(self.measured_as_predicted())
        self.assertEqual(rc, 0)
        self.assertAlmostEqual(out["share_of_slice_best"], 1.0)
        self.assertEqual(out["timed"][0]["params"], self.primaries[0]["params"])
        self.assertGreater(out["spearman"], 0.99)
        self.assertEqual(len(out["timed"]), 8)  # the top 8; the rest are further than 3%
        self.assertEqual(out["slice"]["restricted_to"], SLICE)

    def test_a_spilled_selection_gives_its_place_to_the_next(self):
        trials = self.measured_as_predicted()
        first = text(self.primaries[0]["params"])
        trials[first] = ("skipped", 0.0)
        # Its late 0 variant spilled too. The stand-ins are the selection's late 0 variants first,
        # as the engine hands them out, then the ninth primary.
        first_late0 = dict(self.primaries[0]["params"], late=0)
        trials[text(first_late0)] = ("skipped", 0.0)
        rc, out, _ = self.replay(trials)
        timed = [c["params"] for c in out["timed"]]
        self.assertNotIn(self.primaries[0]["params"], timed)
        variants = [dict(c["params"], late=0) for c in self.primaries[1:8] if c["params"].get("late") == 1]
        self.assertIn(variants[0] if variants else self.primaries[8]["params"], timed)
        self.assertEqual(len(timed), 8)
        self.assertEqual(rc, 0 if out["share_of_slice_best"] >= 0.97 else 1)

    def test_a_best_the_search_leaves_out_fails(self):
        trials = self.measured_as_predicted()
        far = self.primaries[40]["params"]
        trials[text(far)] = ("ok", 10 * self.primaries[0]["PP_gcells"])
        rc, out, _ = self.replay(trials)
        self.assertEqual(rc, 1)
        self.assertEqual(out["slice_best"]["params"], far)
        self.assertLess(out["share_of_slice_best"], 0.2)

    def test_an_unmeasured_selection_says_so(self):
        trials = self.measured_as_predicted()
        del trials[text(self.primaries[2]["params"])]
        rc, out, _ = self.replay(trials)
        self.assertEqual(rc, 2)
        self.assertEqual(out["unmeasured"], 1)

    def test_a_cache_replays_as_its_csv(self):
        trials = self.measured_as_predicted()
        trials[text(self.primaries[0]["params"])] = ("skipped", 0.0)
        trials[text(self.primaries[30]["params"])] = ("ok", 2 * self.primaries[0]["PP_gcells"])
        rc_csv, from_csv, _ = self.replay(trials)
        rc_db, from_db, err = self.replay_db(trials)
        self.assertEqual(rc_db, rc_csv, err)
        self.assertEqual(rc_db, 1)
        self.assertEqual(from_db["timed"], from_csv["timed"])
        self.assertEqual(from_db["slice"]["restricted_to"], SLICE)

    def write_runs(self, name, runs):
        """Writes {run: trials} as one CSV and returns its path."""
        path = os.path.join(self.tmp.name, name)
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["run", "config", "domain", "dtype", "strategy", "params", "status", "gcells"])
            for run, trials in runs.items():
                for params, (status, gcells) in trials.items():
                    w.writerow([run, "j3d7pt", DOMAIN, "double", "wpipe3d", params, status, gcells])
        return path

    def replay_files(self, paths, runs):
        run = subprocess.run([sys.executable, REPLAY, "-b", os.path.dirname(TBTUNE), *paths, "--run", runs,
                              "--config", "j3d7pt", "--strategy", "wpipe3d", "--steps", "100", "--json"],
                             capture_output=True, text=True)
        return run.returncode, (json.loads(run.stdout) if run.stdout else None), run.stderr

    def test_runs_in_several_files_form_one_slice(self):
        trials = self.measured_as_predicted()
        far = text(self.primaries[40]["params"])
        trials[far] = ("ok", 10 * self.primaries[0]["PP_gcells"])  # the slice's best, in b.csv's run 8
        keys = sorted(trials, key=lambda k: k != far)
        first = {k: trials[k] for k in keys[len(keys) // 2:]}
        second = {k: trials[k] for k in keys[:len(keys) // 2]}
        a = self.write_runs("a.csv", {"7": first, "9": {far: ("ok", 1.0)}})
        b = self.write_runs("b.csv", {"8": second})
        rc, whole, _ = self.replay(trials)
        rc2, split, err = self.replay_files([a, b], "7,8")
        self.assertEqual((rc2, split["timed"], split["slice_best"]), (rc, whole["timed"], whole["slice_best"]), err)
        self.assertEqual(rc2, 1)
        # A shape measured in several runs counts as the last of --run measured it.
        _, later, _ = self.replay_files([a, b], "8,9")
        self.assertNotEqual(later["slice_best"]["params"], self.primaries[40]["params"])
        _, earlier, _ = self.replay_files([a, b], "9,8")
        self.assertEqual(earlier["slice_best"]["params"], self.primaries[40]["params"])

    def test_a_trial_outside_the_space_is_left_out(self):
        trials = self.measured_as_predicted()
        outside = dict(self.primaries[0]["params"], bps=9)  # the space holds 1 and 2 blocks per SM
        trials[text(outside)] = ("ok", 10 * self.primaries[0]["PP_gcells"])
        rc, out, err = self.replay(trials)
        self.assertEqual(rc, 0, err)
        self.assertAlmostEqual(out["share_of_slice_best"], 1.0)
        self.assertEqual(out["slice"]["outside_space"], 1)
        self.assertNotIn(outside, [c["params"] for c in out["timed"]])

    def test_bad_input_is_one_line_and_exit_2(self):
        rc, out, err = self.replay({})
        self.assertEqual(rc, 2)
        self.assertIsNone(out)
        self.assertIn("no wpipe3d trials of j3d7pt in run 1", err)
        self.assertEqual(len(err.strip().splitlines()), 1)
        path = os.path.join(self.tmp.name, "broken.json")
        with open(path, "w") as f:
            f.write("[{")
        run = subprocess.run([sys.executable, REPLAY, path, "--config", "j3d7pt", "--strategy", "wpipe3d"],
                             capture_output=True, text=True)
        self.assertEqual(run.returncode, 2)
        self.assertIn("not the JSON of `tbtune db show --json`", run.stderr)
        with open(path, "w") as f:
            json.dump([{"stencil": "j3d7pt"}], f)  # no domain, no trials
        run = subprocess.run([sys.executable, REPLAY, path, "--config", "j3d7pt", "--strategy", "wpipe3d"],
                             capture_output=True, text=True)
        self.assertEqual(run.returncode, 2)
        self.assertIn("not trials of the expected form", run.stderr)
        self.assertNotIn("Traceback", run.stderr)
        run = subprocess.run([sys.executable, REPLAY, os.path.join(self.tmp.name, "none.csv"), "--run", "1",
                              "--config", "j3d7pt", "--strategy", "wpipe3d"], capture_output=True, text=True)
        self.assertEqual(run.returncode, 2)
        self.assertIn("No such file", run.stderr)
        path = os.path.join(self.tmp.name, "one.csv")
        with open(path, "w") as f:
            f.write("run,config,domain,dtype,strategy,params,status,gcells\n"
                    f"1,j3d7pt,{DOMAIN},double,wpipe3d,{text(self.primaries[0]['params'])},ok,1.0\n")
        run = subprocess.run([sys.executable, REPLAY, "-b", os.path.join(self.tmp.name, "no-build"), path, "--run",
                              "1", "--config", "j3d7pt", "--strategy", "wpipe3d"], capture_output=True, text=True)
        self.assertEqual(run.returncode, 2)
        self.assertIn("build tbtune first", run.stderr)
        self.assertNotIn("Traceback", run.stderr)


if __name__ == "__main__":
    unittest.main()
