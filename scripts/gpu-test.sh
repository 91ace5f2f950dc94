#!/usr/bin/env bash
# On a GPU machine with a build folder already made (the CUDA toolkit must be there for NVRTC):
# runs the GPU tests, then a short tune of j2d5pt and j3d7pt, printing GCells/s.
# Usage: scripts/gpu-test.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
db=$(mktemp -d)/gpu-test.db
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader || true
TBTUNE_SOURCE_DIR=$PWD TBTUNE_CLI=$(realpath "$build/tbtune") "$build/tests/gpu_test" --gtest_brief=1
for spec in configs/j2d5pt.yaml configs/j3d7pt.yaml; do
  "$build/tbtune" tune "$spec" --db "$db" --steps 100
  "$build/tbtune" lookup "$spec" --db "$db" --steps 100
done
