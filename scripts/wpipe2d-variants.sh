#!/usr/bin/env bash
# Builds timing executables of wpipe2d kernel variants (scripts/wpipe2d_variant.cu) with nvcc, for
# experiments the tuner cannot run (docs/bench-2d.md). Each argument NAME:SPEC:PARAMS:BODY makes
# OUT_DIR/NAME from `tbtune emit configs/SPEC.yaml --strategy wpipe2d --param ...` (double):
#   BODY split: the kernel as the tuner builds it;
#   BODY clean: every period runs the loop body without the boundary ring's selects (wrong at the
#               domain's edges; shows what the interior costs with one body in the kernel).
# Run each on a GPU as OUT_DIR/NAME NX NY STEPS.
# Usage: scripts/wpipe2d-variants.sh TBTUNE OUT_DIR NAME:SPEC:PARAMS:BODY ...
#   PARAMS as rx=7,tw=2,warps=8,rows=1,bps=1
set -euo pipefail
cd "$(dirname "$0")/.."
tbtune=$1 out=$2
shift 2
mkdir -p "$out"
for v in "$@"; do
  IFS=: read -r name spec params body <<<"$v"
  args=()
  for p in ${params//,/ }; do args+=(--param "$p"); done
  "$tbtune" emit "configs/$spec.yaml" --dtype double --strategy wpipe2d "${args[@]}" --no-compile -o "$out/$name.cuh"
  case $body in
    split) ;;
    clean) sed -i 's/wp_period<W, TW, 0, true>(b, s, k0, c0, c1);/wp_period<W, TW, 0, false>(b, s, k0, c0, c1);/' "$out/$name.cuh"
           grep -q 'wp_period<W, TW, 0, true>' "$out/$name.cuh" && { echo "$name: edge body still called" >&2; exit 1; } ;;
    *) echo "$name: BODY must be split or clean" >&2; exit 2 ;;
  esac
  nvcc -O3 -std=c++17 -arch=sm_90 --expt-relaxed-constexpr -Xptxas -v -DKERNEL_SOURCE="\"$PWD/$out/$name.cuh\"" \
    -o "$out/$name" scripts/wpipe2d_variant.cu > "$out/$name.log" 2>&1 || { cat "$out/$name.log" >&2; exit 1; }
  echo "$name: $(grep -A3 "entry function 'tb_full'" "$out/$name.log" | grep -oE "[0-9]+ bytes spill stores|Used [0-9]+ registers" | paste -sd,)"
done
