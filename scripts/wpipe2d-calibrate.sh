#!/usr/bin/env bash
# The calibration grid wpipe2d's model was fitted on (docs/bench-2d.md, "The model fitted"), in one
# command for a GPU machine: per (stencil, rx, split, rows), an exhaustive wpipe2d tune over warps x tw x
# blocks per SM on FastStencil's domain, double, 1000 steps. Every tune's JSON goes to OUT_DIR/calib.tgz
# (rewritten after each tune, so a run cut short keeps what it measured).
# Usage: [RUNS="j2d49pt:13:0:1 ..."] scripts/wpipe2d-calibrate.sh [BUILD_DIR] [OUT_DIR]
#   RUNS: STENCIL:RX:SPLIT:ROWS entries (default: the grid of docs/bench-2d.md).
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-gpu} out=${2:-${OUT:-wpipe2d-calib}}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
source scripts/faststencil-domains.sh
json=$(mktemp -d) db=$(mktemp -d)/calib.db
export TBTUNE_SOURCE_DIR=$PWD
for run in ${RUNS:-j2d49pt:13:0:1 j2d49pt:11:0:1 j2d25pt:13:0:1 j2d25pt:11:0:1 j2d49pt:11:1:1 j2d25pt:13:1:1
                   j2ds9pt:11:1:1 j2d9pt:11:1:1 j2d5pt:7:1:1 j2d25pt:13:0:2 j2d49pt:11:0:2}; do
  IFS=: read -r s rx split rows <<< "$run"
  name=$s-$rx-$split-$rows start=$SECONDS
  "$build/tbtune" tune "configs/$s.yaml" --domain "${domain[$s]}" --steps 1000 --db "$db" --json --strategy wpipe2d \
    --search exhaustive --param rx="$rx" --param split="$split" --param rows="$rows" > "$json/$name.json" 2> "$json/$name.err"
  echo "$run: exit $? in $((SECONDS - start)) s"
  tar czf "$out/calib.tgz" -C "$json" .
done
