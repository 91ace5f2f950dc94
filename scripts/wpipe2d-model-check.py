#!/usr/bin/env python3
"""How well the model ranks wpipe2d's measured candidates (docs/bench-2d.md, "The model is not
fitted"; docs/model.md, "Issue"): per stencil, the best measured GCells/s, the best among the 8
and 16 measured candidates the model ranks highest, the measured figure of its first choice,
Spearman's rho between predicted and measured, and the model's top 8 over the whole space with
the measured figure of each (or - where it was never timed).

Usage: [DTYPE=float] [DEVICE=H200] scripts/wpipe2d-model-check.py [TBTUNE] [CSV[,CSV...]] [VERSION ...]
  TBTUNE   the tbtune binary (default build/tbtune)
  CSV      trials as docs/data/wpipe2d-h100-v9-calib.csv or wpipe2d-h100-v9-exhaustive.csv holds
           them (a column per parameter), or as v12-default-tunes-h100.csv and
           v13-default-tunes.csv and v23-tunes.csv do (a params column, "k=v k=v" or "k=v;k=v";
           their rows of DEVICE on FastStencil's domains are used), several joined by commas
           (default: the v9 calib, exhaustive and model CSVs).
           A CSV without a split column (before version 9) reads as split 0.
  VERSION  the versions (or builds, in a CSV with a build column) to use (default: every version
           but 5)
  DTYPE    the rows of this dtype, where the CSV has a dtype column (default double)
  DEVICE   the rows of this device, ranked with its built-in profile (default H100)
"""
import collections
import csv
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOMAIN = {"j2d5pt": "11616x11616", "j2d9pt": "9504x9504", "j2ds9pt": "9504x9504",
          "j2d25pt": "8448x8448", "j2d49pt": "9504x9504"}  # FastStencil's, as measured
KEYS = ("rx", "warps", "tw", "rows", "bps", "split", "sep")


DTYPE = os.environ.get("DTYPE", "double")
DEVICE = os.environ.get("DEVICE", "H100")


def ranking(tbtune, stencil, top):
    out = subprocess.run([tbtune, "model", str(ROOT / "configs" / f"{stencil}.yaml"), "--domain",
                          DOMAIN[stencil], "--steps", "1000", "--dtype", DTYPE, "--profile", DEVICE.lower(),
                          "--strategy", "wpipe2d",
                          "--top", str(top), "--json"], capture_output=True, text=True, check=True).stdout
    return [(tuple(c["params"][k] for k in KEYS), c["PP_gcells"]) for c in json.loads(out)["candidates"]]


def main():
    tbtune = sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "build" / "tbtune")
    data = ROOT / "docs" / "data"
    paths = sys.argv[2].split(",") if len(sys.argv) > 2 else [
        str(data / f"wpipe2d-h100-v9-{name}.csv") for name in ("calib", "exhaustive", "model")]
    versions = set(sys.argv[3:])
    measured = collections.defaultdict(dict)
    for path in paths:
        with open(path) as f:
            rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
        for r in rows:
            # version 7's CSV has one version and no column; the default tunes' name a build
            version = r.get("version") or r.get("build") or "7"
            if (version not in versions) if versions else version == "5":
                continue
            if r.get("dtype", "double") != DTYPE or r.get("device", "H100") != DEVICE:
                continue
            if r.get("domain", "fs") not in ("fs", DOMAIN.get(r["stencil"])):
                continue
            if "params" in r:  # the default tunes' CSVs: every strategy, params as "k=v k=v"
                if r["strategy"] != "wpipe2d" or r["status"] != "ok":
                    continue
                r.update(p.split("=") for p in r["params"].replace(";", " ").split())
            if float(r["gcells"]) > 0:
                k = tuple(int(r.get(x, "0")) for x in KEYS)
                measured[r["stencil"]][k] = max(measured[r["stencil"]].get(k, 0.0), float(r["gcells"]))
    for stencil, meas in sorted(measured.items()):
        pred = dict(ranking(tbtune, stencil, 100000))
        ks = [k for k in meas if k in pred]
        if len(ks) < 2:
            continue
        best = max(meas[k] for k in ks)
        by_pred = sorted(ks, key=lambda k: -pred[k])
        by_meas = sorted(ks, key=lambda k: -meas[k])
        rank_p = {k: i for i, k in enumerate(by_pred)}
        rank_m = {k: i for i, k in enumerate(by_meas)}
        n = len(ks)
        rho = 1 - 6 * sum((rank_p[k] - rank_m[k]) ** 2 for k in ks) / (n * (n * n - 1))
        top8, top16 = max(meas[k] for k in by_pred[:8]), max(meas[k] for k in by_pred[:16])
        first = meas[by_pred[0]]
        print(f"{stencil}: {n} measured, best {best:.1f}; model's top 8 of them {top8:.1f} "
              f"({100 * top8 / best:.1f}%), top 16 {100 * top16 / best:.1f}%; its first {first:.1f} "
              f"({100 * first / best:.1f}%); rho {rho:.2f}")
        print("  model's top 8 of the space (rx, warps, tw, rows, bps, split, sep: predicted / measured):")
        for k, pp in ranking(tbtune, stencil, 8)[:8]:
            print(f"    {k}: {pp:.0f} / {meas[k]:.1f}" if k in meas else f"    {k}: {pp:.0f} / -")


if __name__ == "__main__":
    main()
