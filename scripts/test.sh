#!/usr/bin/env bash
# Installs dependencies, builds, and runs the whole test suite. GPU tests skip themselves when no
# GPU is usable, so this is the same command on a laptop, CI and a GPU node.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh -DTBTUNE_WERROR=ON
ctest --test-dir build --output-on-failure -j "$(nproc)"
