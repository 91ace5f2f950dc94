#!/usr/bin/env python3
"""Replays the default model search of this build over trials measured before: which shapes of
an exhaustively measured slice of one strategy's space would the search time, and how close does
the best of them come to the slice's best? It runs no GPU and compiles nothing, so a model change
can be judged against the measurements in docs/data/ before any device time is spent on it.

  scripts/model-replay.py [-b build] TRIALS... [--run 105] --config j3d7pt --strategy wpipe3d
      [--dtype T] [--steps N] [--param NAME=VALUE ...] [--profile h200] [--top 8] [--within 3]
      [--json]

TRIALS: CSVs of trials in docs/data/v29-trials.csv's columns (run, config or stencil, domain,
dtype, strategy, params, status, gcells), the slice being the trials of --run (or of --run
132,137: several runs, a shape measured in more than one counting as the last); or the output of
`tbtune db show STENCIL --db F --json` (a file ending in .json), every trial of the cache's
problem, its step count taken from there. The config names its spec, configs/CONFIG.yaml. The
slice is the config's trials of that strategy (and dtype, and --param values), which must be of
one domain, dtype and device; the parameters the same in all of them (e.g. bps=1, warps=2,
wy=4) restrict the model's ranking of the whole space (`tbtune model --json`, the slice's domain
and dtype) to the slice.

The search is replayed as tuner/search/search.cpp makes it within one strategy: the model's
first --top primary shapes that fit, then every further one predicted within --within percent
of the best; a selected shape that spilled in the trials (status skipped) is passed over, and
its late 0 variant, then the next primary in rank order, stands in for it. A selected shape the
trials do not hold is reported as unmeasured: the replay says nothing about it.

Exit status: 0 when the best measured shape of the replayed selection is within --within percent
of the slice's best, 1 when not, 2 on bad input or an unmeasured shape in the selection.
"""
import argparse
import csv
import json
import os
import subprocess
import sys


def fail(message):
    print(f"model-replay: {message}", file=sys.stderr)
    sys.exit(2)


def params_key(params):
    return tuple(sorted(params.items()))


def parse_params(text):
    return {k: int(v) for k, v in (kv.split("=") for kv in text.split(";"))} if text else {}


def ranks(values):
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    i = 0
    while i < len(order):  # ties share their mean rank
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2
        i = j + 1
    return out


def rank_correlation(a, b):
    if len(a) < 2:
        return float("nan")
    ra, rb = ranks(a), ranks(b)
    ma, mb = sum(ra) / len(ra), sum(rb) / len(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    var = (sum((x - ma) ** 2 for x in ra) * sum((y - mb) ** 2 for y in rb)) ** 0.5
    return cov / var if var else float("nan")


def csv_rows(paths, run):
    """The trials of run `run` in CSVs of docs/data/'s form; of runs "A,B,..." in that order, so
    that a shape measured in several counts at its measurement in the last of them."""
    if run is None:
        fail(f"{', '.join(paths)}: a CSV of trials needs --run")
    rows = []
    for path in paths:
        with open(path, newline="") as f:
            rows += csv.DictReader(line for line in f if not line.startswith("#"))
    for r in rows:  # the older files name the config `stencil`
        r.setdefault("config", r.get("stencil"))
    runs = run.split(",")
    return sorted((r for r in rows if r.get("run") in runs), key=lambda r: runs.index(r["run"]))


def db_rows(path):
    """The trials of `tbtune db show STENCIL --json`'s output, one problem per stored winner."""
    with open(path) as f:
        try:
            entries = json.load(f)
        except json.JSONDecodeError as e:
            fail(f"{path}: not the JSON of `tbtune db show --json`: {e}")
    rows = []
    for w in entries:
        nx, ny, nz = w["domain"]
        domain = f"{nx}x{ny}" + (f"x{nz}" if nz > 1 else "")
        for t in w["trials"]:
            params = ";".join(f"{k}={v}" for k, v in sorted(t["params"].items()))
            rows.append({"config": w["stencil"], "domain": domain, "dtype": w["dtype"], "steps": w["steps"],
                         "device": w["device"], "strategy": t["strategy"], "params": params, "status": t["status"],
                         "gcells": t["gcells"]})
    return rows


def load_slice(paths, run, config, strategy, dtype, only):
    """The slice's trials by parameters, their domain and dtype (and steps, where the source
    says)."""
    if any(p.endswith(".json") for p in paths) and len(paths) > 1:
        fail("the JSON of `tbtune db show` is replayed alone, not with other trials")
    rows = db_rows(paths[0]) if paths[0].endswith(".json") else csv_rows(paths, run)
    path = ", ".join(paths)
    rows = [r for r in rows if r["config"] == config and r["strategy"] == strategy and
            (dtype is None or r["dtype"] == dtype) and
            all(parse_params(r["params"]).get(k) == v for k, v in only.items())]
    where = f" in run {run}" if run is not None else ""
    if not rows:
        fail(f"{path}: no {strategy} trials of {config}{where}" + (f" with {only}" if only else ""))
    problems = {(r["domain"], r["dtype"], r.get("steps"), r.get("device")) for r in rows}
    if len(problems) != 1:
        fail(f"{path}: the {config} trials{where} cover several domains, dtypes, step counts or devices: "
             f"{sorted(map(str, problems))}; choose with --dtype or --param")
    trials = {params_key(parse_params(r["params"])): r for r in rows}
    domain, dtype, steps, _ = problems.pop()
    return trials, domain, dtype, steps


def shared_params(trials):
    """The parameters whose value is the same in every trial."""
    keys = iter(trials)
    common = dict(next(keys))
    for k in keys:
        p = dict(k)
        common = {name: v for name, v in common.items() if p.get(name) == v}
    return common


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def ranked(tbtune, config, domain, dtype, strategy, profile, steps):
    cmd = [tbtune, "model", os.path.join(ROOT, "configs", f"{config}.yaml"), "--domain", domain, "--dtype", dtype, "--profile", profile,
           "--strategy", strategy, "--top", "1000000", "--json"]
    if steps:
        cmd += ["--steps", str(steps)]
    try:
        run = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as e:
        fail(f"{tbtune}: {e.strerror} (build tbtune first, or name its folder with -b)")
    if run.returncode != 0:
        fail(f"tbtune model failed: {run.stderr.strip()}")
    return json.loads(run.stdout)["candidates"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trials", nargs="+",
                    help="CSVs of trials (docs/data/) or the JSON of `tbtune db show STENCIL --json`")
    ap.add_argument("-b", "--build", default="build")
    ap.add_argument("--run", help="the run whose trials form the slice (CSVs of trials); A,B for several")
    ap.add_argument("--config", required=True)
    ap.add_argument("--strategy", required=True)
    ap.add_argument("--profile", default="h200")
    ap.add_argument("--dtype", choices=["float", "double"], help="where the run has both")
    ap.add_argument("--steps", type=int, help="the trials' step count (default: the spec's)")
    ap.add_argument("--top", type=int, default=8)
    ap.add_argument("--within", type=float, default=3.0, help="percent")
    ap.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                    help="restrict the slice further (repeatable), e.g. one of several slices of a run")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    try:
        only = parse_params(";".join(args.param))
        trials, domain, dtype, steps = load_slice(args.trials, args.run, args.config, args.strategy, args.dtype,
                                                  only)
    except OSError as e:
        fail(f"{e.filename or ', '.join(args.trials)}: {e.strerror}")
    except (KeyError, TypeError, ValueError) as e:  # a column, a field or a number missing
        fail(f"{', '.join(args.trials)}: not trials of the expected form ({type(e).__name__}: {e})")
    steps = args.steps or steps
    space = ranked(os.path.join(args.build, "tbtune"), args.config, domain, dtype, args.strategy, args.profile, steps)
    # A trial of a shape this build's space does not hold (a run's experiment) is left out, and
    # the parameters the others share restrict the ranking.
    in_space = {params_key(c["params"]) for c in space}
    outside = [k for k in trials if k not in in_space]
    trials = {k: r for k, r in trials.items() if k in in_space}
    if not trials:
        fail(f"{', '.join(args.trials)}: no trial of the slice is of a shape in this build's space")
    common = shared_params(trials)
    cands = [c for c in space if all(c["params"].get(k) == v for k, v in common.items())]
    measured = {k: float(r["gcells"]) for k, r in trials.items() if r["status"] == "ok"}
    if not measured:
        fail(f"{', '.join(args.trials)}: no trial of the slice ran (status ok)")
    best_key = max(measured, key=measured.get)
    # The search chooses among the shapes that fit or may fit (by the register slack of a
    # model search), by prediction; stand-ins among those that fit by the estimate.
    fitting = [c for c in cands if c["fits"]]
    if any("model_search_may_choose" not in c for c in cands):
        fail(f"{args.build}/tbtune model --json has no model_search_may_choose: rebuild tbtune")
    primaries = sorted((c for c in cands if c["model_search_may_choose"] and not c["variant"]),
                       key=lambda c: -c["PP_gcells"])
    if not primaries:
        fail("no shape of the slice may be chosen by the model search")
    threshold = (1 - args.within / 100) * primaries[0]["PP_gcells"]
    selected = []
    for c in primaries:
        if len(selected) >= args.top and c["PP_gcells"] < threshold:
            break
        selected.append(c)

    def status(c):
        r = trials.get(params_key(c["params"]))
        return r["status"] if r else "unmeasured"

    # Stand-ins, as tuner/search/search.cpp's stand_ins lists them: the selected shapes' late 0
    # variants that fit by the estimate (late 0 may fit where late 1 spilled), in the
    # selection's order, then the other shapes that fit by the estimate, in rank order; 3
    # places per selected shape. The engine hands the next one to each trial passed over (not
    # compiled, or pruned after compiling), a stand-in's own included.
    def same_shape(a, b):
        return {k: x for k, x in a["params"].items() if k != "late"} == {k: x for k, x in b["params"].items() if k != "late"}

    chosen = {params_key(c["params"]) for c in selected}
    stand = [v for c in selected for v in fitting if v["variant"] and v["params"].get("late") == 0 and same_shape(v, c)]
    stand += [p for p in fitting if not p["variant"] and params_key(p["params"]) not in chosen]
    stand = stand[:3 * len(selected)]
    timed, todo, owed = [], list(selected), 0
    for c in todo:  # grows as stand-ins are owed
        if status(c) in ("skipped", "resources", "compile_error"):
            if owed < len(stand):
                todo.append(stand[owed])
                owed += 1
        else:
            timed.append(c)

    # Spearman's rank correlation of the predictions with the measurements over the shapes that ran.
    ran = [c for c in cands if params_key(c["params"]) in measured]
    spearman = rank_correlation([c["PP_gcells"] for c in ran], [measured[params_key(c["params"])] for c in ran])
    unmeasured = [c for c in timed if status(c) == "unmeasured"]
    got = max((measured[params_key(c["params"])] for c in timed if status(c) == "ok"), default=0.0)
    best = measured[best_key]
    index = next((i for i, c in enumerate(cands) if params_key(c["params"]) == best_key), None)
    rank = index + 1 if index is not None else None  # 1: the model's best of the slice
    report = {
        "slice": {"run": args.run, "config": args.config, "domain": domain, "dtype": dtype, "restricted_to": common,
                  "shapes": len(trials), "measured_ok": len(measured), "outside_space": len(outside)},
        "slice_best": {"params": dict(best_key), "gcells": best, "model_rank": rank,
                       "fits": bool(index is not None and cands[index]["fits"]),
                       "may_be_chosen": bool(index is not None and cands[index]["model_search_may_choose"]),
                       "predicted": cands[index]["PP_gcells"] if index is not None else None,
                       "regs_estimate": cands[index]["regs_estimate"] if index is not None else None},
        "timed": [{"params": c["params"], "predicted": c["PP_gcells"], "status": status(c),
                   "gcells": measured.get(params_key(c["params"]))} for c in timed],
        "spearman": spearman,
        "replayed_best": got,
        "share_of_slice_best": got / best,
        "unmeasured": len(unmeasured),
    }
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        source = f"run {args.run}'s" if args.run is not None else "the cache's"
        print(f"{args.config} {domain} {dtype}, {source} {args.strategy} slice {common}: "
              f"{len(trials)} shapes, {len(measured)} ran"
              f"{f' ({len(outside)} trials of shapes outside the space left out)' if outside else ''}")
        print(f"slice best {best:.1f} GCells/s {dict(best_key)}: model rank {rank}, "
              f"predicted {report['slice_best']['predicted']:.1f}, estimate {report['slice_best']['regs_estimate']}"
              f"{'' if report['slice_best']['fits'] else ' (does not fit by the model)'}"
              f"{'' if report['slice_best']['may_be_chosen'] else '; the model search may not choose it'}")
        for c in report["timed"]:
            g = f"{c['gcells']:.1f}" if c["gcells"] is not None else "-"
            print(f"  timed {g:>7}  predicted {c['predicted']:7.1f}  {c['status']:<10} {c['params']}")
        print(f"Spearman of predicted and measured over the {len(ran)} shapes that ran: {spearman:.3f}")
        print(f"replayed search's best: {got:.1f} = {got / best:.3f} of the slice's best"
              f"{f'; {len(unmeasured)} selected shapes were not measured' if unmeasured else ''}")
    if unmeasured:
        return 2
    return 0 if got >= (1 - args.within / 100) * best else 1


if __name__ == "__main__":
    sys.exit(main())
