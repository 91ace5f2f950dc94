#!/usr/bin/env bash
# Installs dependencies, builds, and runs the whole test suite. GPU tests skip themselves when no
# GPU is usable, so this is the same command on a laptop, CI and a GPU node.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each step prints its wall time, so CI's budget can be watched step by step.
step() {
  local start=$SECONDS
  echo "test.sh: $*"
  "$@"
  echo "test.sh: $1 took $((SECONDS - start)) s"
}
step scripts/install-deps.sh
step scripts/build.sh -DTBTUNE_WERROR=ON
step ctest --test-dir build --output-on-failure -j "$(nproc)"
# Hardening (docs/hardening.md): the CPU suite under ASan + UBSan, then each fuzz target for 60 s.
step scripts/sanitize.sh
step scripts/fuzz.sh -t 60 spec cache sweep
