#!/usr/bin/env bash
# Tunes a list of specs on this GPU and prints one table: spec, dtype, winner and its parameters,
# GCells/s, the model's PP, % of PP, speedup over the naive kernel, and tuning wall time.
# Usage: scripts/bench.sh [-b BUILD_DIR] [-d float|double] [-t TOP] [-o OUT.json] [SPEC ...]
# (default: every configs/*.yaml). Extra tune options can be passed in TBTUNE_BENCH_ARGS.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build dtype=double top=8 out=
while getopts "b:d:t:o:" opt; do
  case $opt in
    b) build=$OPTARG ;; d) dtype=$OPTARG ;; t) top=$OPTARG ;; o) out=$OPTARG ;;
    *) echo "usage: $0 [-b BUILD_DIR] [-d float|double] [-t TOP] [-o OUT.json] [SPEC ...]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
specs=("$@")
[ ${#specs[@]} -eq 0 ] && specs=(configs/*.yaml)
db=${TBTUNE_BENCH_DB:-$(mktemp -d)/bench.db}
results=$(mktemp)
for spec in "${specs[@]}"; do
  start=$(date +%s.%N)
  # shellcheck disable=SC2086
  "$build/tbtune" tune "$spec" --dtype "$dtype" --top "$top" --db "$db" --json ${TBTUNE_BENCH_ARGS:-} \
    > "$results.one" || true
  end=$(date +%s.%N)
  python3 - "$results.one" "$spec" "$start" "$end" >> "$results" <<'PY'
import json, sys
path, spec, start, end = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
try:
    r = json.load(open(path))
except Exception as e:
    print(json.dumps({"spec": spec, "error": f"no JSON from tune: {e}"})); sys.exit()
naive = next((t for t in r.get("trials", []) if t["strategy"] == "naive" and t["status"] == "ok"), None)
w = r.get("winner")
print(json.dumps({"spec": spec, "stencil": r["stencil"]["name"], "dtype": r["stencil"]["dtype"],
                  "winner": w, "naive_gcells": naive["gcells"] if naive else None,
                  "trials": len(r.get("trials", [])), "seconds": end - start,
                  "device": r.get("device", {}).get("name")}))
PY
done
python3 - "$results" "${out:-}" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
if sys.argv[2]:
    json.dump(rows, open(sys.argv[2], "w"), indent=1)
hdr = ["spec", "dtype", "winner", "params", "GCells/s", "model PP", "% of PP", "x naive", "trials", "tune s"]
table = []
for r in rows:
    w = r.get("winner")
    if not w:
        table.append([r.get("stencil", r["spec"]), r.get("dtype", "-"), "none", r.get("error", "-")] + ["-"] * 6)
        continue
    pp = w["predicted_PP_gcells"]
    params = ",".join(f"{k}={v}" for k, v in w["params"].items()) or "-"
    table.append([r["stencil"], r["dtype"], w["strategy"], params, f"{w['gcells']:.1f}", f"{pp:.1f}",
                  f"{100 * w['gcells'] / pp:.0f}%" if pp else "-",
                  f"{w['gcells'] / r['naive_gcells']:.2f}" if r["naive_gcells"] else "-",
                  str(r["trials"]), f"{r['seconds']:.1f}"])
width = [max(len(str(x)) for x in col) for col in zip(hdr, *table)]
for row in [hdr] + table:
    print("  ".join(str(x).ljust(w) for x, w in zip(row, width)).rstrip())
PY
