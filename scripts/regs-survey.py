#!/usr/bin/env python3
"""Compiles a sample of a strategy's shapes with NVRTC (`tbtune emit`, no GPU needed) and writes
ptxas' register and spill figures of their full kernel next to the model's register estimate, one
CSV row per shape: the data to judge a strategy's register estimate by (docs/tuning.md, "Register
estimates near the cap"). ptxas is deterministic, so the figures are those a tune on any GPU of
the same architecture gets from the same toolkit.

  scripts/regs-survey.py [-b build] -o regs.csv [--strategy wpipe3d] [--per-config 36] [--jobs N]
      SPEC:DOMAIN[:DTYPE] ...

From each problem's space (`tbtune model --json`, the built-in H200 profile) it keeps the primary
shapes (no `late` variants) whose estimate lies within 0.5-1.7x the register cap their threads x
blocks per SM leave, where the estimate decides whether a shape is in the search, and takes up
to --per-config of them, spread evenly over that range of estimates.

Exit status 0; 1 when some shape did not compile (its row is left out and named on stderr); 2 on
bad input.
"""
import argparse
import csv
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

REGS_PER_SM = 65536


def cap(params):
    threads = params["warps"] * params.get("wy", 1) * 32
    per_thread = REGS_PER_SM // (threads * params["bps"]) // 8 * 8
    return min(255, per_thread)


def space(tbtune, spec, domain, dtype, strategy):
    cmd = [tbtune, "model", spec, "--domain", domain, "--dtype", dtype, "--profile", "h200",
           "--strategy", strategy, "--top", "100000", "--json"]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        print(f"regs-survey: {spec}: {run.stderr.strip() or 'tbtune model failed'}", file=sys.stderr)
        sys.exit(2)
    return [c for c in json.loads(run.stdout)["candidates"] if not c["variant"]]


def sample(cands, n):
    band = [c for c in cands if 0.5 <= c["regs_estimate"] / cap(c["params"]) <= 1.7]
    band.sort(key=lambda c: (c["regs_estimate"] / cap(c["params"]), json.dumps(c["params"], sort_keys=True)))
    if len(band) <= n:
        return band
    return [band[round(i * (len(band) - 1) / (n - 1))] for i in range(n)]


def compile_one(tbtune, spec, domain, dtype, strategy, cand):
    cmd = [tbtune, "emit", spec, "--domain", domain, "--dtype", dtype, "--strategy", strategy,
           "-o", os.devnull, "--json"]
    for k, v in sorted(cand["params"].items()):
        cmd += ["--param", f"{k}={v}"]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        return None
    full = json.loads(run.stdout)["kernels"]["tb_full"]
    return full["registers"], full["spill_stores"] + full["spill_loads"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("problems", nargs="+", help="SPEC:DOMAIN[:DTYPE], e.g. configs/j3d7pt.yaml:572x216x2560")
    ap.add_argument("-b", "--build", default="build")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--strategy", default="wpipe3d")
    ap.add_argument("--per-config", type=int, default=36)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    tbtune = os.path.join(args.build, "tbtune")
    work = []
    for problem in args.problems:
        if problem.count(":") not in (1, 2):
            print(f"regs-survey: {problem}: expected SPEC:DOMAIN[:DTYPE]", file=sys.stderr)
            return 2
        spec, domain, *rest = problem.split(":")
        dtype = rest[0] if rest else "double"
        for cand in sample(space(tbtune, spec, domain, dtype, args.strategy), args.per_config):
            work.append((spec, domain, dtype, cand))
    print(f"{len(work)} shapes to compile", file=sys.stderr, flush=True)
    failed = 0
    with open(args.output, "w", newline="") as f, ThreadPoolExecutor(args.jobs) as pool:
        out = csv.writer(f)
        out.writerow(["config", "domain", "dtype", "strategy", "params", "estimate", "cap", "registers",
                      "spill_bytes"])
        futures = [pool.submit(compile_one, tbtune, s, d, t, args.strategy, c) for s, d, t, c in work]
        for i, ((spec, domain, dtype, cand), fut) in enumerate(zip(work, futures)):
            res = fut.result()
            if res is None:
                print(f"{spec} {cand['params']}: tbtune emit failed", file=sys.stderr)
                failed += 1
                continue
            params = ";".join(f"{k}={v}" for k, v in sorted(cand["params"].items()))
            name = os.path.splitext(os.path.basename(spec))[0]
            out.writerow([name, domain, dtype, args.strategy, params, cand["regs_estimate"], cap(cand["params"]),
                          *res])
            f.flush()
            if (i + 1) % 10 == 0:
                print(f"{i + 1}/{len(work)} compiled", file=sys.stderr, flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
