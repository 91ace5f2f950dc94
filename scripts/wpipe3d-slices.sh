#!/usr/bin/env bash
# On a GPU machine: an exhaustive tune of one layout of wpipe3d's space per 3D config (every
# rx, cy, tw, late and fold at the given warps, wy and bps), FastStencil's domains (j3d17pt its
# config's), double, 100 steps, each into its own cache; then the cache's trials as `tbtune db
# show --json` prints them, OUT_DIR/S.json, which scripts/model-replay.py replays a model change
# over on the build machine (docs/tuning.md, "Register estimates near the cap"). The slices of
# scripts/slices.sh, one per config at the same layout.
# Usage: [SPECS="poisson ..."] [LAYOUT="warps=2 wy=4 bps=1"] [LIMIT=150]
#        scripts/wpipe3d-slices.sh [BUILD_DIR] [OUT_DIR]
# LIMIT: seconds per config (`--budget`); the candidates not reached are said in the tune's log.
# LAYOUT="": every layout. Exit 0 when every tune and its `db show` succeeded, 1 when one did
# not (the others still run), 2 on a bad SPECS or build folder.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/faststencil-domains.sh
layout=${LAYOUT-warps=2 wy=4 bps=1}
slices=()
for s in ${SPECS:-poisson j3d27pt j3d13pt j3d17pt j3d7pt}; do
  [[ ${domain[$s]:-} == *x*x* ]] || { echo "wpipe3d-slices: '$s' is not a 3D config with a domain in scripts/faststencil-domains.sh" >&2; exit 2; }
  slices+=("$s${layout:+:${layout// /,}}")
done
LIMIT=${LIMIT:-150} exec scripts/slices.sh "${1:-build-gpu}" "${2:-${OUT:-wpipe3d-slices}}" "${slices[@]}"
