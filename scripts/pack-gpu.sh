#!/usr/bin/env bash
# Copies what the GPU scripts need from ./build into ./build-gpu (the binary and the GPU test
# executables), small enough to send to a GPU machine. The GPU tests find the binary through
# TBTUNE_CLI (see tests/gpu/gpu_test.cpp).
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf build-gpu && mkdir -p build-gpu/tests
cp build/tbtune build-gpu/
cp build/tests/gpu_test build/tests/probe_gpu_test build-gpu/tests/
du -sh build-gpu
