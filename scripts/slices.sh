#!/usr/bin/env bash
# On a GPU machine: exhaustive tunes of slices of a register-tiled strategy's space (wpipe2d for a
# 2D config, wpipe3d for a 3D one), each slice the candidates of one config with the given
# parameters fixed (every value of the others), on FastStencil's domain (scripts/faststencil-
# domains.sh), in DTYPE (default double), 1000 steps in 2D and 100 in 3D, each slice into a cache
# of its own; then the cache's trials as `tbtune db show --json` prints them, OUT_DIR/NAME.json
# (NAME: the config, with -N for its N-th slice after the first), which scripts/model-replay.py
# replays a model change over on the build machine.
# Usage: [LIMIT=200] [SPILLS=1] [DTYPE=float] scripts/slices.sh BUILD_DIR OUT_DIR SPEC[:P=V,P=V...] ...
#   e.g. j2d5pt:warps=8,tw=2,late=0,bps=1,split=1 j3d7pt:warps=2,wy=4,bps=1
# LIMIT: seconds per slice (`--budget`); the candidates not reached are said in the slice's log.
# SPILLS=1 also times the kernels that spill (tb_edge, which runs on a few SMs beside tb_full, may
# spill where tb_full does not). Exit 0 when every tune and its `db show` succeeded, 1 when one
# did not (the others still run), 2 on bad input.
set -uo pipefail
[ $# -ge 3 ] || { sed -n '2,14p' "$0" >&2; exit 2; }
build=$(realpath -m "$1") out=$(realpath -m "$2")
shift 2
cd "$(dirname "$0")/.."
source scripts/faststencil-domains.sh
for slice in "$@"; do  # before any GPU time is spent
  s=${slice%%:*}
  [ -n "${domain[$s]:-}" ] ||
    { echo "slices: '$s' is not a config with a domain in scripts/faststencil-domains.sh" >&2; exit 2; }
done
[ -x "$build/tbtune" ] || { echo "slices: no $build/tbtune (scripts/pack-gpu.sh makes build-gpu)" >&2; exit 2; }
mkdir -p "$out"
export TBTUNE_SOURCE_DIR=$PWD
spills=()
[ "${SPILLS:-0}" = 1 ] && spills=(--allow-spills)
db=$(mktemp -d)
echo "caches in $db"
declare -A seen
status=0
for slice in "$@"; do
  s=${slice%%:*} params=
  [[ $slice == *:* ]] && params=${slice#*:}
  seen[$s]=$((${seen[$s]:-0} + 1))
  name=$s
  [ "${seen[$s]}" -gt 1 ] && name=$s-${seen[$s]}
  if [[ ${domain[$s]} == *x*x* ]]; then strategy=wpipe3d steps=100; else strategy=wpipe2d steps=1000; fi
  args=()
  for p in ${params//,/ }; do args+=(--param "$p"); done
  start=$SECONDS
  "$build/tbtune" tune "configs/$s.yaml" --domain "${domain[$s]}" --steps "$steps" --dtype "${DTYPE:-double}" --strategy "$strategy" \
    --search exhaustive "${args[@]}" "${spills[@]}" --budget "${LIMIT:-200}" --db "$db/$name.db" -v \
    > "$out/$name.log" 2>&1
  rc=$?
  echo "$name ($strategy ${params:-every shape}): exit $rc in $((SECONDS - start)) s; $(grep -E '^(winner|time budget)' "$out/$name.log" | tr '\n' ' ')"
  if [ "$rc" != 0 ]; then
    status=1
    continue  # its log says why; a cache without a winner has nothing to show
  fi
  "$build/tbtune" db show "$s" --db "$db/$name.db" --json > "$out/$name.json" || status=1
done
exit "$status"
