#!/usr/bin/env bash
# The GPU measurements wpipe2d's kernel still needs (docs/bench-2d.md), in one command for a GPU
# machine: the GPU tests of every 2D spec (every strategy against the naive kernel), then, per 2D
# config on FastStencil's H100 domain, double, 1000 steps: a wpipe2d tune of the model's best 16
# and an exhaustive wpipe2d tune at 8 warps, 1 row, 1 block per SM (FastStencil's shape), each
# winner verified; every trial's JSON goes to OUT_DIR (one tarball) for refitting the model.
# Usage: [SPECS="j2d5pt ..."] [MODES="model exhaustive"] [TESTS=0]
#        scripts/wpipe2d-gpu-check.sh [BUILD_DIR] [OUT_DIR]   (pack with scripts/pack-gpu.sh)
# SPECS, MODES: a part of the run (default all); TESTS=0 skips the GPU tests. OUT_DIR gets one
# tarball of the JSON.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-gpu} out=${2:-${OUT:-wpipe2d-check}}
mkdir -p "$out"
db=$(mktemp -d)/wpipe2d.db
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
export TBTUNE_SOURCE_DIR=$PWD TBTUNE_CLI=$PWD/$build/tbtune
[ "${TESTS:-1}" = 0 ] || "$build/tests/gpu_test" --gtest_brief=1 \
  --gtest_filter='Specs/*.Run/j2d*:Specs/*.Run/general2d_r4:Specs/*.Run/nonlinear' 2>&1 | tail -20
source scripts/faststencil-domains.sh
summary() {  # the five fastest trials of a tune's JSON
  python3 -c 'import json,sys
d=json.load(open(sys.argv[1])); t=sorted((x for x in d.get("trials",[]) if x["gcells"]), key=lambda x:-x["gcells"])
for x in t[:5]: print(" ", x["params"], round(x["gcells"],1), x["status"], x["registers"], "regs", x["spill_bytes"], "B spilled")' "$1"
}
json=$(mktemp -d)
for s in ${SPECS:-j2d5pt j2d9pt j2ds9pt j2d25pt j2d49pt}; do
  [[ -v domain[$s] ]] || { echo "$s: no FastStencil domain known; skipped"; continue; }
  for mode in ${MODES:-model exhaustive}; do
    args=(--strategy wpipe2d --top 16 --within 0)
    [ "$mode" = exhaustive ] && args=(--strategy wpipe2d --search exhaustive --param warps=8 --param rows=1 --param bps=1)
    start=$SECONDS
    "$build/tbtune" tune "configs/$s.yaml" --domain "${domain[$s]}" --steps 1000 --db "$db" --json "${args[@]}" \
      > "$json/$s-$mode.json" 2> "$json/$s-$mode.err"
    echo "$s $mode: exit $? in $((SECONDS - start)) s"
    summary "$json/$s-$mode.json"
  done
done
tar czf "$out/wpipe2d-check.tgz" -C "$json" .
