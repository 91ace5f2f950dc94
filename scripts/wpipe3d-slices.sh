#!/usr/bin/env bash
# On a GPU machine: an exhaustive tune of one layout of wpipe3d's space per 3D config (every
# rx, cy, tw, late and fold at the given warps, wy and bps), FastStencil's domains (j3d17pt its
# config's), double, 100 steps, each into its own cache; then the cache's trials as `tbtune db
# show --json` prints them, OUT_DIR/S.json, which scripts/model-replay.py replays a model change
# over on the build machine (docs/tuning.md, "Register estimates near the cap").
# Usage: [SPECS="poisson ..."] [LAYOUT="warps=2 wy=4 bps=1"] [LIMIT=150]
#        scripts/wpipe3d-slices.sh [BUILD_DIR] [OUT_DIR]
# LIMIT: seconds per config (`--budget`); the candidates not reached are said in the tune's log.
# LAYOUT="": every layout. Exit 0 when every tune and its `db show` succeeded, 1 when one did
# not (the others still run), 2 on a bad SPECS or build folder.
set -uo pipefail
build=$(realpath -m "${1:-build-gpu}") out=$(realpath -m "${2:-${OUT:-wpipe3d-slices}}")
cd "$(dirname "$0")/.."
source scripts/faststencil-domains.sh
specs=${SPECS:-poisson j3d27pt j3d13pt j3d17pt j3d7pt}
for s in $specs; do  # before any GPU time is spent
  [[ ${domain[$s]:-} == *x*x* ]] || { echo "wpipe3d-slices: '$s' is not a 3D config with a domain in scripts/faststencil-domains.sh" >&2; exit 2; }
done
[ -x "$build/tbtune" ] || { echo "wpipe3d-slices: no $build/tbtune (scripts/pack-gpu.sh makes build-gpu)" >&2; exit 2; }
mkdir -p "$out"
export TBTUNE_SOURCE_DIR=$PWD
layout=()
for p in ${LAYOUT-warps=2 wy=4 bps=1}; do layout+=(--param "$p"); done
db=$(mktemp -d)
echo "caches in $db"
status=0
for s in $specs; do
  start=$SECONDS
  "$build/tbtune" tune "configs/$s.yaml" --domain "${domain[$s]}" --steps 100 --strategy wpipe3d \
    --search exhaustive "${layout[@]}" --budget "${LIMIT:-150}" --db "$db/$s.db" > "$out/$s.log" 2>&1
  rc=$?
  echo "$s: exit $rc in $((SECONDS - start)) s; $(grep -E '^(winner|time budget)' "$out/$s.log" | tr '\n' ' ')"
  if [ "$rc" != 0 ]; then
    status=1
    continue  # its log says why; a cache without a winner has nothing to show
  fi
  "$build/tbtune" db show "$s" --db "$db/$s.db" --json > "$out/$s.json" || status=1
done
exit "$status"
