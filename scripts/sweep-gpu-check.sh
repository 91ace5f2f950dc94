#!/usr/bin/env bash
# Checks a sweep end to end on a GPU machine without Slurm or the sqlite3 shell (not run by CI;
# a few minutes):
#  1. --compile-only over 4 small problems (as a CPU node would run it), into a CUBIN folder;
#  2. two shards of the sweep, run as Slurm array tasks 0 and 1 would be (SLURM_ARRAY_* set by
#     hand), each into its own cache, reading that CUBIN folder;
#  3. `tbtune db merge` of the two caches, then a `tbtune lookup` hit for every problem;
#  4. the CUBINs the GPU shards compiled: the folder's count before and after them (expected 0,
#     since the sweep file names the profile the compile-only pass ranked with).
# Usage: scripts/sweep-gpu-check.sh [BUILD_DIR]   (default: build; needs python3)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="$(realpath "${1:-build}")/tbtune"
ROOT=$(pwd)
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
fail() { echo "sweep-gpu-check: FAIL: $*" >&2; exit 1; }
cubins() { find "$WORK/cubins" -name '*.cubin' | wc -l; }

cat > "$WORK/sweep.yaml" <<YAML
specs: [$ROOT/configs/j2d5pt.yaml, $ROOT/configs/j3d7pt.yaml]
dtypes: [double, float]
domains: [[2048, 2048], [128, 128, 128]]
steps: [200]
profile: h100
tune: {top: 2, within: 0, max_candidates: 2}
YAML
"$BIN" sweep "$WORK/sweep.yaml" --list
problems=$("$BIN" sweep "$WORK/sweep.yaml" --list --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["problems"]))')
[ "$problems" -ge 4 ] || fail "expected at least 4 problems, got $problems"

echo "== 1. compile-only (no GPU used)"
CUDA_VISIBLE_DEVICES= "$BIN" sweep "$WORK/sweep.yaml" --compile-only --db "$WORK/compile.db" \
  --cubins "$WORK/cubins" -q || fail "compile-only exited $?"
before=$(cubins)
echo "CUBINs after the compile-only pass: $before"

echo "== 2. two shards as Slurm array tasks 0 and 1"
for id in 0 1; do
  set +e
  SLURM_ARRAY_JOB_ID=4242 SLURM_ARRAY_TASK_ID=$id SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_MAX=1 \
    SLURM_ARRAY_TASK_COUNT=2 SLURM_ARRAY_TASK_STEP=1 \
    "$BIN" sweep "$WORK/sweep.yaml" --db "$WORK/shard-%a.db" --cubins "$WORK/cubins" \
    --summary "$WORK/summary-%a.json" -q
  rc=$?
  set -e
  [ "$rc" = 0 ] || fail "shard $id exited $rc"
done
after=$(cubins)

echo "== 3. merge, then lookup every problem"
"$BIN" db merge "$WORK/sweep.db" "$WORK/shard-%a.db" --expect 2 || fail "db merge exited $?"
"$BIN" db merge "$WORK/sweep.db" "$WORK/shard-%a.db" --expect 2 --json \
  | python3 -c 'import json,sys; j=json.load(sys.stdin); assert all(i["trials"]==0 and i["winners"]==0 for i in j["inputs"]), j' \
  || fail "merging again was not a no-op"
"$BIN" sweep "$WORK/sweep.yaml" --list --json | python3 -c '
import json, sys
for p in json.load(sys.stdin)["problems"]:
    print(p["spec"], "x".join(map(str, p["domain"])), p["dtype"], p["steps"])' |
while read -r spec domain dtype steps; do
  "$BIN" lookup "$spec" --domain "$domain" --dtype "$dtype" --steps "$steps" --db "$WORK/sweep.db" \
    || fail "no stored winner for $spec $domain $dtype $steps"
done

echo "== 4. compiles"
echo "CUBINs before the GPU shards: $before, after: $after: the GPU shards compiled $((after - before))"
python3 - "$WORK" <<'PY'
import json, sys
for i in (0, 1):
    s = json.load(open(f"{sys.argv[1]}/summary-{i}.json"))
    for p in s["problems"]:
        print(f"shard {i}: #{p['index']} {p['stencil']} {p['dtype']} {p['domain']}: {p['status']}, "
              f"{p.get('timed', 0)} timed, winner {p.get('winner', {}).get('strategy')} "
              f"{p.get('winner', {}).get('gcells', 0):.1f} GCells/s")
PY
[ "$after" = "$before" ] || fail "the GPU shards compiled $((after - before)) CUBIN(s)"
echo "sweep-gpu-check: PASS"
