#!/usr/bin/env bash
# Times `db merge` of caches holding 100k trials in all (4 caches of 25k, 50 trials per key, a
# winner with its image per key), built through the Cache API by merge_test's disabled
# benchmark. The files go to /dev/shm when it exists, so building them is fast; the figure is in
# docs/sweeps.md.   Usage: scripts/bench-merge.sh [BUILD_DIR] [SHARDS]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
[ -d /dev/shm ] && export TMPDIR=/dev/shm
TBTUNE_MERGE_SHARDS=${2:-4} "$build/tests/merge_test" --gtest_also_run_disabled_tests \
  --gtest_filter='*Benchmark100kTrials' | grep -E '^merge:|OK|FAILED'
