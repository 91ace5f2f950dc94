#!/usr/bin/env bash
# Checks the tuning engine on a real GPU (not run by CI; takes a few minutes):
#  1. failure isolation: with TBTUNE_PLANT_FAILURE (a test-only hook, see tuner/gpu/plant.hpp),
#     candidate 2 hits an illegal address and candidate 4 never ends; the tune must still
#     finish with exit 0, record them as launch_error and timeout, restart the worker, and
#     store a verified winner that `tbtune lookup` finds;
#  2. kill -9 + resume: a tune killed with SIGKILL mid-way leaves its finished trials in the
#     cache and no worker or compile process behind; running it again re-times none of them
#     and removes the temporary folder the killed one left;
#  3. SIGTERM: the tune stops after the current candidate, stores the winner so far, exits 130,
#     and leaves no process behind;
#  4. SIGINT while the tune waits for a long compile (a 3D spec, a cold CUBIN folder): the
#     compiles are ended, the tune exits 130 within seconds, and no compile process or
#     half-written file is left in the CUBIN folder; run again, it finishes.
# Usage: [CHECKS="1 2 3 4"] scripts/engine-gpu-check.sh [BUILD_DIR]   (default: build; needs
# python3; CHECKS: which of the checks to run)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="$(realpath "${1:-build}")/tbtune"
SPEC=configs/j2d5pt.yaml
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
fail() { echo "engine-gpu-check: FAIL: $*" >&2; exit 1; }
CHECKS="${CHECKS:-1 2 3 4}"
want() { [[ " $CHECKS " == *" $1 "* ]]; }
# json FILE EXPR: evaluates the Python expression EXPR with `j` the parsed file.
json() { python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"; }
trials_in() { python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('select count(*) from trials').fetchone()[0])" "$1" 2>/dev/null || echo 0; }
# The stored trials a resumed tune reuses: all but the skipped ones (pruned after compiling),
# which it prunes again (db/cache.cpp, find_trial).
reusable_in() { python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(\"select count(*) from trials where status <> 'skipped'\").fetchone()[0])" "$1" 2>/dev/null || echo 0; }

if want 1; then
echo "== 1. planted illegal address (candidate 2) and endless kernel (candidate 4)"
DB1="$WORK/plant.db"
set +e
TBTUNE_PLANT_FAILURE="2:illegal,4:hang" "$BIN" tune "$SPEC" --domain 2051x1029 --steps 200 \
  --db "$DB1" --top 6 --within 0 --timeout 15 --json >"$WORK/plant.json"
rc=$?
set -e
[ "$rc" = 0 ] || fail "tune with planted failures exited $rc"
[ "$(json "$WORK/plant.json" "j['trials'][2]['status']")" = launch_error ] || fail "candidate 2 is not launch_error"
[ "$(json "$WORK/plant.json" "j['trials'][4]['status']")" = timeout ] || fail "candidate 4 is not timeout"
[ "$(json "$WORK/plant.json" "j['worker_restarts'] >= 2")" = True ] || fail "the worker was not restarted twice"
[ "$(json "$WORK/plant.json" "sum(t['status'] == 'ok' for t in j['trials']) >= 3")" = True ] || fail "fewer than 3 ok trials"
[ "$(json "$WORK/plant.json" "j['winner']['status']")" = ok ] || fail "no verified winner"
"$BIN" lookup "$SPEC" --domain 2051x1029 --steps 200 --db "$DB1" >/dev/null || fail "lookup finds no winner"
json "$WORK/plant.json" "'   statuses: ' + ' '.join(t['status'] for t in j['trials']) + '; winner ' + j['winner']['strategy'] + ' %.1f GCells/s' % j['winner']['gcells']"
fi

if want 2; then
echo "== 2. kill -9 mid-tune, then resume"
DB2="$WORK/resume.db"
ARGS=(tune "$SPEC" --steps 2000 --db "$DB2" --top 8 --within 0 --no-probe --json -q)
# The engine's temporary folders (with the reference output) go here, to be counted.
export TMPDIR="$WORK/tmp2"
mkdir -p "$TMPDIR"
"$BIN" "${ARGS[@]}" >/dev/null &
pid=$!
for _ in $(seq 1 600); do [ "$(trials_in "$DB2")" -ge 3 ] && break; sleep 0.5; done
kill -9 "$pid" 2>/dev/null || fail "the tune ended before it could be killed (make it longer)"
wait "$pid" 2>/dev/null || true
[ "$(trials_in "$DB2")" -ge 3 ] || fail "only $(trials_in "$DB2") trials stored before the kill"
before="$(reusable_in "$DB2")"
sleep 1
if pgrep -f "$BIN (compile-)?worker" >/dev/null; then fail "a worker or compile process outlived its killed tune"; fi
[ "$(ls "$TMPDIR" | wc -l)" = 1 ] || fail "the killed tune left $(ls "$TMPDIR" | wc -l) temporary folders, expected 1"
"$BIN" "${ARGS[@]}" >"$WORK/resume.json" || fail "the resumed tune failed"
[ "$(ls "$TMPDIR" | wc -l)" = 0 ] || fail "the killed tune's temporary folder outlived the next tune"
unset TMPDIR
reused="$(json "$WORK/resume.json" "j['reused']")"
[ "$reused" = "$before" ] || fail "resumed tune reused $reused trials, expected $before"
[ "$(json "$WORK/resume.json" "sum(not t['reused'] for t in j['trials']) == len(j['trials']) - $before")" = True ] || fail "resume re-timed a stored trial"
[ "$(json "$WORK/resume.json" "j['winner']['status']")" = ok ] || fail "no winner after resume"
"$BIN" "${ARGS[@]}" >"$WORK/again.json" || fail "third run failed"
# Skipped trials (spilling kernels) are re-pruned on every run, which times nothing.
[ "$(json "$WORK/again.json" "all(t['reused'] or t['status'] == 'skipped' for t in j['trials'])")" = True ] ||
  fail "a third run re-timed something"
echo "   $before trials survived kill -9 and were reused; a third run re-timed nothing"
fi

if want 3; then
echo "== 3. SIGTERM stops after the current candidate and exits 130"
DB3="$WORK/term.db"
"$BIN" tune "$SPEC" --steps 2000 --db "$DB3" --top 8 --within 0 --no-probe -q >/dev/null &
pid=$!
for _ in $(seq 1 600); do [ "$(trials_in "$DB3")" -ge 2 ] && break; sleep 0.5; done
kill -TERM "$pid"
set +e
wait "$pid"
rc=$?
set -e
[ "$rc" = 130 ] || fail "SIGTERM: exit code $rc, expected 130"
"$BIN" lookup "$SPEC" --steps 2000 --db "$DB3" >/dev/null || fail "SIGTERM: no winner so far stored"
if pgrep -f "$BIN (compile-)?worker" >/dev/null; then fail "SIGTERM: a worker or compile process outlived the tune"; fi
fi

if want 4; then
echo "== 4. SIGINT during a long compile"
DB4="$WORK/int/int.db"
mkdir -p "$WORK/int"
# The naive reference and one large wpipe3d module (it spills: pruned once compiled), on one
# core: the module takes about 10 s there, the naive one a second.
ARGS4=(tune configs/j3d27pt.yaml --steps 20 --db "$DB4" --no-probe -q --strategy wpipe3d --param rx=3
  --param cy=6 --param tw=2 --param wy=4 --param warps=2 --param bps=1 --param late=0 --param fold=0)
taskset -c 0 "$BIN" "${ARGS4[@]}" >/dev/null &
pid=$!
for _ in $(seq 1 1800); do [ "$(trials_in "$DB4")" -ge 1 ] && break; sleep 0.1; done
[ "$(trials_in "$DB4")" -ge 1 ] || { kill -9 "$pid"; fail "SIGINT: the tune stored no trial in 3 minutes"; }
sleep 0.5
t0=$(date +%s.%N)
kill -INT "$pid"
set +e
wait "$pid"
rc=$?
set -e
took=$(python3 -c "import sys; print('%.1f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$t0" "$(date +%s.%N)")
[ "$rc" = 130 ] || fail "SIGINT: exit code $rc, expected 130"
[ "$(python3 -c "print(float('$took') < 3)")" = True ] || fail "SIGINT: the tune took $took s to stop"
# Only naive's: the stopped candidate's trial is not recorded (a resumed tune compiles it).
[ "$(trials_in "$DB4")" = 1 ] || fail "SIGINT: $(trials_in "$DB4") trials stored, expected naive's alone"
if pgrep -f "$BIN (compile-)?worker" >/dev/null; then fail "SIGINT: a worker or compile process outlived the tune"; fi
left="$(find "$WORK/int/cubins" -name '*.tmp*' 2>/dev/null | wc -l)"
[ "$left" = 0 ] || fail "SIGINT: $left half-written file(s) left in the CUBIN folder"
"$BIN" "${ARGS4[@]}" >/dev/null || true  # its one candidate spills: no winner, exit 2
[ "$(trials_in "$DB4")" = 2 ] || fail "SIGINT: the tune run again did not record the candidate"
echo "   stopped $took s after SIGINT, during the compile; run again, it compiled the candidate"
fi
echo "engine-gpu-check: all checks passed"
