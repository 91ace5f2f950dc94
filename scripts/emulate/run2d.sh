#!/usr/bin/env bash
# Runs a wpipe2d candidate on the CPU, one std::thread per CUDA thread (shim.hpp), and compares
# with a CPU reference after STEPS steps (the remainder of STEPS / depth through the one-step
# kernel). For checking the template's index arithmetic, rings and shuffles on a machine without
# a GPU; it cannot show races that need GPU timing.
# Usage: [BLOCKS=N] [EDGE=N] [TBTUNE=path/to/tbtune] scripts/emulate/run2d.sh SPEC DTYPE NX NY STEPS [NAME=VALUE ...]
# BLOCKS: tb_full's blocks (and the rest and step kernels'), EDGE: tb_edge's with split; they
# share their tiles' rows (tb_share), and the tuner gives them one wave. Default 1 and BLOCKS.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$here/../.."
spec=$1 dt=$2 nx=$3 ny=$4 steps=$5
shift 5
args=()
for p in "$@"; do args+=(--param "$p"); done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"${TBTUNE:-$root/build/tbtune}" emit "$spec" --domain "${nx}x${ny}" --steps "$steps" --strategy wpipe2d --dtype "$dt" "${args[@]}" --no-compile -o "$work/k.cu" >/dev/null
sed -i -e 's|#include <cuda_pipeline_primitives.h>||' \
  -e 's|extern __shared__ __align__(16) unsigned char tb_smem\[\];|unsigned char* tb_smem = tb_block_smem;|' "$work/k.cu"
g++ -std=c++20 -O1 -w -I"$root" -DKERNEL="\"$work/k.cu\"" -o "$work/k" "$here/driver2d.cpp" \
  "$root/tuner/codegen/strategies/wpipe2d_grid.cpp" "$root/tuner/codegen/strategies/split.cpp" -pthread
echo -n "$(basename "$spec") $dt ${nx}x${ny} steps=$steps blocks=${BLOCKS:-1} edge=${EDGE:-${BLOCKS:-1}} $*: "
"$work/k" "$nx" "$ny" "$steps" "${BLOCKS:-1}" "${EDGE:-${BLOCKS:-1}}"
