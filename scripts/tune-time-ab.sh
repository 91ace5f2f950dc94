#!/usr/bin/env bash
# Times default tunes of two builds against each other, in rounds of alternating order: each
# tune from cold (a fresh cache, so a fresh CUBIN folder), as a first run on a machine would be.
# One line per tune: the build, the config, the search's wall time, the command's, the winner
# and its GCells/s, the trials and how many were pruned after compiling; each tune's `-v` log
# goes to OUT_DIR.
# Usage: [ROUNDS=2] [STEPS_2D=1000] [STEPS_3D=100] scripts/tune-time-ab.sh BUILD_A BUILD_B OUT_DIR CONFIG...
#   CONFIG: a configs/ name (j2d49pt), tuned on FastStencil's domain where it has one.
set -uo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 4 ] || { echo "usage: scripts/tune-time-ab.sh BUILD_A BUILD_B OUT_DIR CONFIG..." >&2; exit 2; }
a=$1 b=$2 out=$3
shift 3
for bin in "$a/tbtune" "$b/tbtune"; do [ -x "$bin" ] || { echo "tune-time-ab: no $bin" >&2; exit 2; }; done
for s in "$@"; do [ -f "configs/$s.yaml" ] || { echo "tune-time-ab: no configs/$s.yaml" >&2; exit 2; }; done
source scripts/faststencil-domains.sh
mkdir -p "$out"
export TBTUNE_SOURCE_DIR=$PWD
for round in $(seq 1 "${ROUNDS:-2}"); do
  order=("$a" "$b")
  [ $((round % 2)) = 0 ] && order=("$b" "$a")
  for s in "$@"; do
    steps=${STEPS_2D:-1000}
    grep -q '^dims: 3' "configs/$s.yaml" && steps=${STEPS_3D:-100}
    args=()
    [ -n "${domain[$s]:-}" ] && args=(--domain "${domain[$s]}")
    for build in "${order[@]}"; do
      name=$(basename "$build")-$s-r$round
      db=$(mktemp -d)/t.db
      t0=$(date +%s.%N)
      "$build/tbtune" tune "configs/$s.yaml" "${args[@]}" --steps "$steps" --db "$db" --json -v \
        > "$out/$name.json" 2> "$out/$name.log"
      rc=$?
      t1=$(date +%s.%N)
      python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); w = d.get("winner") or {}; s = d.get("search", {}); t = d.get("trials", [])
print("%s exit %s: search %.1f s, command %.1f s; winner %s %.1f GCells/s; %d trials, %d pruned" % (sys.argv[2], sys.argv[3],
      s.get("wall_s", 0), float(sys.argv[4]), w.get("strategy"), w.get("gcells") or 0, len(t),
      sum(x.get("status") == "skipped" for x in t)))' "$out/$name.json" "$name" "$rc" "$(python3 -c "print($t1 - $t0)")" 2>&1 | head -3
      rm -rf "$(dirname "$db")"
    done
  done
done
