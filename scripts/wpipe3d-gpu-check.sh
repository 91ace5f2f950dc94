#!/usr/bin/env bash
# wpipe3d on a GPU machine, in one command (docs/bench-3d.md): the GPU tests of every 3D spec
# (every strategy against the naive kernel), then per 3D config on FastStencil's H100 domain,
# double, 100 steps: FastStencil's own shape (SHAPES=1), the model's best 16 wpipe3d candidates
# (MODEL=1) and the default tune (DEFAULT=1), each winner verified; every tune's JSON goes to
# OUT_DIR (one tarball).
# Usage: [SPECS="j3d7pt ..."] [TESTS=0] [SHAPES=0] [MODEL=0] [TOP=16] [DEFAULT=0] [DTYPE=float]
#        scripts/wpipe3d-gpu-check.sh [BUILD_DIR] [OUT_DIR]
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-gpu} out=${2:-${OUT:-wpipe3d-check}}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
export TBTUNE_SOURCE_DIR=$PWD TBTUNE_CLI=$PWD/$build/tbtune
[ "${TESTS:-1}" = 0 ] || "$build/tests/gpu_test" --gtest_brief=1 \
  --gtest_filter='Specs/*.Run/j3d*:Specs/*.Run/poisson:Specs/*.Run/*3d*' 2>&1 |
  grep -E 'FAILED|Failure|Expected|Which is|no point|PASSED|tests from' | head -40
# FastStencil's H100 domains and the shapes of its parameter table, in wpipe3d's parameters
# (j3d17pt: none).
source scripts/faststencil-domains.sh
declare -A shape=([j3d7pt]="rx=2 cy=7 wy=4 warps=2 tw=3" [poisson]="rx=3 cy=8 wy=4 warps=3 tw=1"
                  [j3d27pt]="rx=3 cy=6 wy=4 warps=3 tw=1" [j3d13pt]="rx=3 cy=6 wy=4 warps=2 tw=1")
summary() {  # the five fastest trials of a tune's JSON, and the winner
  python3 -c 'import json,sys
d=json.load(open(sys.argv[1])); t=sorted((x for x in d.get("trials",[]) if x["gcells"]), key=lambda x:-x["gcells"])
for x in t[:5]: print(" ", x["strategy"], x["params"], round(x["gcells"],1), x["status"], x["registers"], "regs", x["spill_bytes"], "B spilled")' "$1" 2>&1
}
json=$(mktemp -d)
tune() {  # NAME SPEC ARGS...: one tune into a fresh cache
  local name=$1 s=$2 start=$SECONDS db
  shift 2
  db=$(mktemp -d)/t.db
  "$build/tbtune" tune "configs/$s.yaml" --domain "${domain[$s]}" --steps 100 --dtype "${DTYPE:-double}" --db "$db" \
    --json "$@" > "$json/$s-$name.json" 2> "$json/$s-$name.err"
  echo "$s $name: exit $? in $((SECONDS - start)) s"
  summary "$json/$s-$name.json"
}
for s in ${SPECS:-j3d7pt poisson j3d27pt j3d13pt j3d17pt}; do
  if [ "${SHAPES:-1}" = 1 ] && [[ -v shape[$s] ]]; then
    args=()
    for p in ${shape[$s]}; do args+=(--param "$p"); done
    tune shape "$s" --strategy wpipe3d --search exhaustive --param bps=1 "${args[@]}"
  fi
  [ "${MODEL:-1}" = 1 ] && tune model "$s" --strategy wpipe3d --top "${TOP:-16}" --within 0
  [ "${DEFAULT:-1}" = 1 ] && tune default "$s"
done
tar czf "$out/wpipe3d-check.tgz" -C "$json" .
