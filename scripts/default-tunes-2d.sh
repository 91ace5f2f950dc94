#!/usr/bin/env bash
# Default tunes (the model search over every strategy) of the 2D configs, each with a fresh cache and
# so a cold compile cache, as a first run on a new machine would be: FastStencil's domains in double, the
# configs' own domains in double, FastStencil's domains in float; 1000 steps. One line per tune (winner,
# GCells/s, the tune's wall time, candidates timed of those feasible); the JSON to OUT_DIR/default-tunes.tgz.
# Usage: [RUNS="fs:double own:double fs:float"] scripts/default-tunes-2d.sh [BUILD_DIR] [OUT_DIR]
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-gpu} out=${2:-${OUT:-default-tunes}}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
source scripts/faststencil-domains.sh
json=$(mktemp -d)
export TBTUNE_SOURCE_DIR=$PWD
for run in ${RUNS:-fs:double own:double fs:float}; do
  IFS=: read -r where dtype <<< "$run"
  for s in j2d5pt j2d9pt j2ds9pt j2d25pt j2d49pt; do
    args=()
    [ "$where" = fs ] && args=(--domain "${domain[$s]}")
    name=$s-$where-$dtype
    "$build/tbtune" tune "configs/$s.yaml" "${args[@]}" --dtype "$dtype" --steps 1000 --db "$(mktemp -d)/t.db" --json \
      > "$json/$name.json" 2> "$json/$name.err"
    rc=$?
    python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); w = d.get("winner") or {}; s = d.get("search", {})
print(sys.argv[2], "exit", sys.argv[3], "winner", w.get("strategy"), w.get("params"), round(w.get("gcells") or 0, 1),
      "GCells/s; wall %.1f s; timed %s of %s feasible" % (s.get("wall_s", 0), s.get("timed"), s.get("feasible")))' \
      "$json/$name.json" "$name" "$rc" 2>&1 | head -3
    tar czf "$out/default-tunes.tgz" -C "$json" .
  done
done
