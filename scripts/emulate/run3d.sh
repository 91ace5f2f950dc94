#!/usr/bin/env bash
# Runs a smtile3d, devtile3d or wpipe3d candidate on the CPU, one std::thread per CUDA thread (shim.hpp), and
# compares with a CPU reference after STEPS steps. Shared memory and scratch start as NaN, so a
# garbage read that reaches the output fails. For checking the template's index arithmetic on a
# machine without a GPU; it cannot show races that need GPU timing.
# Usage: [SEGS=N] scripts/emulate/run3d.sh SPEC STRATEGY DTYPE NX NY NZ STEPS [NAME=VALUE ...]
# SEGS: smtile3d's and wpipe3d's z segments (gridDim.z; the tuner chooses them to fill waves), default 1.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$here/../.."
spec=$1 st=$2 dt=$3 nx=$4 ny=$5 nz=$6 steps=$7
shift 7
args=()
for p in "$@"; do args+=(--param "$p"); done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"${TBTUNE:-$root/build/tbtune}" emit "$spec" --strategy "$st" --dtype "$dt" --steps "$steps" "${args[@]}" --no-compile -o "$work/k.cu" >/dev/null
sed -i -e 's|#include <cooperative_groups.h>||' -e 's|#include <cuda_pipeline_primitives.h>||' \
  -e 's|extern __shared__ __align__(16) unsigned char tb_smem\[\];|unsigned char* tb_smem = tb_block_smem;|' "$work/k.cu"
driver="$here/driver3d.cpp"
[ "$st" = wpipe3d ] && driver="$here/driver_wpipe3d.cpp"
g++ -std=c++20 -O1 -w -DKERNEL="\"$work/k.cu\"" -o "$work/k" "$driver" -pthread
echo -n "$(basename "$spec") $st $dt ${nx}x${ny}x${nz} steps=$steps segs=${SEGS:-1} $*: "
"$work/k" "$nx" "$ny" "$nz" "$steps" "${SEGS:-1}"
