#!/usr/bin/env bash
# Builds timing executables of wpipe2d kernels (scripts/wpipe2d_variant.cu) with nvcc, to time a
# template's kernels outside the tuner (docs/bench-2d.md): each argument NAME:SPEC:PARAMS makes
# OUT_DIR/NAME from `tbtune emit configs/SPEC.yaml --strategy wpipe2d --param ...` (double).
# For a variant of the template, edit OUT_DIR/NAME.cuh and run nvcc as below. (At d69791a this
# script also built a variant whose every period ran the loop body without the ring's selects.)
# Run each on a GPU as OUT_DIR/NAME NX NY STEPS.
# Usage: scripts/wpipe2d-variants.sh TBTUNE OUT_DIR NAME:SPEC:PARAMS ...
#   PARAMS as rx=7,tw=2,warps=8,rows=1,bps=1
set -euo pipefail
cd "$(dirname "$0")/.."
tbtune=$1 out=$2
shift 2
mkdir -p "$out"
for v in "$@"; do
  IFS=: read -r name spec params <<<"$v"
  args=()
  for p in ${params//,/ }; do args+=(--param "$p"); done
  "$tbtune" emit "configs/$spec.yaml" --dtype double --strategy wpipe2d "${args[@]}" --no-compile -o "$out/$name.cuh"
  nvcc -O3 -std=c++17 -arch=sm_90 --expt-relaxed-constexpr -Xptxas -v -DKERNEL_SOURCE="\"$PWD/$out/$name.cuh\"" \
    -I. -o "$out/$name" scripts/wpipe2d_variant.cu tuner/codegen/strategies/wpipe2d_grid.cpp tuner/codegen/strategies/split.cpp > "$out/$name.log" 2>&1 || { cat "$out/$name.log" >&2; exit 1; }
  echo "$name: $(grep -A3 "entry function 'tb_full'" "$out/$name.log" | grep -oE "[0-9]+ bytes spill stores|Used [0-9]+ registers" | paste -sd,)"
done
