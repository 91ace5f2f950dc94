#!/usr/bin/env bash
# The evidence for the search defaults, on a GPU machine: per spec, the default model search,
# then an exhaustive search in the same cache (it reuses the model search's trials and times the
# rest), then `tbtune report`, whose "search" section compares the two (docs/tuning.md,
# "Evidence"). Resumable: a spec whose search is recorded as complete is skipped, and an
# interrupted or out-of-budget search continues from its stored trials, so the set can be spread
# over several calls with --time-limit.
#
# Usage: scripts/search-evidence.sh [--build DIR] [--db FILE] [--out DIR] [--db-copy FILE]
#          [--steps N] [--device N] [--time-limit SECONDS] [SPEC ...]   (default: configs/*.yaml)
#   --build DIR         folder with the tbtune binary (default: build)
#   --db FILE           the evidence cache (default: $HOME/.cache/tbtune/search-evidence/evidence.db);
#                       compiled CUBINs go to a cubins/ folder beside it, which grows to tens of
#                       MB per spec, so keep it out of folders that must stay small
#   --out DIR           report.txt, report.json and one log per tune run (default: build-evidence)
#   --db-copy FILE      after the run, copy the cache (a few MB, no CUBIN folder) to FILE, e.g.
#                       into a folder that is fetched back, to continue on another machine
#   --steps N           passed to every tune (default: each spec's own)
#   --device N          CUDA device (default: 0)
#   --time-limit S      stop starting work after S seconds of this call (0: no limit); each tune
#                       gets the rest as --budget and is stopped with SIGTERM at the limit
# Exit: 0 every spec's two searches are complete; 3 the time limit left work for another call;
# 2 a tune failed or bad usage (the log says which).
set -euo pipefail
cd "$(dirname "$0")/.."

build=build
db=${HOME:?}/.cache/tbtune/search-evidence/evidence.db
out="build-evidence"
db_copy=
steps=
device=0
time_limit=0
# Prints the usage text at the top of this file; exits with $1.
usage() { sed -n '/^# Usage:/,/^# 2 a tune failed/s/^# \{0,1\}//p' "$0" >&2; exit "$1"; }
while [ $# -gt 0 ]; do
  case $1 in
    --build) build=${2:?}; shift 2 ;;
    --db) db=${2:?}; shift 2 ;;
    --out) out=${2:?}; shift 2 ;;
    --db-copy) db_copy=${2:?}; shift 2 ;;
    --steps) steps=${2:?}; shift 2 ;;
    --device) device=${2:?}; shift 2 ;;
    --time-limit) time_limit=${2:?}; shift 2 ;;
    -h|--help) usage 0 ;;
    -*) echo "search-evidence: unknown option '$1'" >&2; usage 2 ;;
    *) break ;;
  esac
done
specs=("$@")
[ ${#specs[@]} -eq 0 ] && specs=(configs/*.yaml)
tbtune=$build/tbtune
[ -x "$tbtune" ] || { echo "search-evidence: no tbtune binary at '$tbtune' (--build)" >&2; exit 2; }
[[ $time_limit =~ ^[0-9]+$ ]] || { echo "search-evidence: --time-limit must be whole seconds" >&2; exit 2; }
mkdir -p "$out/logs"

# Every tune and query sees the same problem: the spec's, with --steps if given.
problem_args=(--db "$db" --device "$device")
[ -n "$steps" ] && problem_args+=(--steps "$steps")

# A tune's last candidate may take a while after --budget stops new ones (its compile, a checked
# run, the timing, storing the winner): the budget leaves this much of the limit for it.
finish_s=30
# No tune starts with less than this left: starting the worker and compiling need some time.
min_start_s=60
started=$SECONDS
left() { echo $((time_limit - (SECONDS - started))); }

# "yes" or "no" for the model and the exhaustive search of SPEC on this device: recorded as
# complete in the cache's tunes, as `tbtune report --json` folds them.
search_state() {
  local spec=$1 device_fp=$2 problem
  problem=$("$tbtune" check "$spec" --json ${steps:+--steps "$steps"})
  # The report goes through a pipe: it outgrows what one command-line argument may hold.
  { if [ -f "$db" ]; then "$tbtune" report --db "$db" --json; else echo '{"search": []}'; fi; } |
    python3 -c "$state_py" "$problem" "$device_fp"
}
state_py='
import json, sys
problem, device, report = json.loads(sys.argv[1]), sys.argv[2], json.load(sys.stdin)
domain = problem["domain"] + [1] * (3 - len(problem["domain"]))
state = {"model": "no", "exhaustive": "no"}
for e in report["search"]:
    if (e["hash"], e["device"], e["dtype"], e["domain"], e["steps"], e["strategy"]) == \
       (problem["hash"], device, problem["dtype"], domain, problem["steps"], None):
        for mode in state:
            if e[mode] and e[mode]["complete"]:
                state[mode] = "yes"
print(state["model"], state["exhaustive"])
'

# Runs one tune of SPEC with the search MODE, logging its output; returns tune's exit code.
run_tune() {
  local spec=$1 mode=$2 name log rc=0
  name=$(basename "$spec" .yaml)
  log="$out/logs/$name.$mode.$(date -u +%Y%m%dT%H%M%SZ).log"
  local cmd=("$tbtune" tune "$spec" "${problem_args[@]}" --search "$mode" -q)
  if [ "$time_limit" -gt 0 ]; then
    # SIGTERM at the limit: tune stops after its current candidate and still records the run;
    # SIGKILL 20 s later only if that candidate hangs.
    cmd=(timeout -s TERM -k 20 "$(( $(left) - 5 ))" "${cmd[@]}" --budget "$(( $(left) - finish_s ))")
  fi
  echo "search-evidence: $name: $mode search ($(date -u +%H:%M:%S)), log $log"
  "${cmd[@]}" >"$log" 2>&1 || rc=$?
  grep -E "^(model|exhaustive) search" "$log" | sed "s/^/  /" || true
  return "$rc"
}

# The device's fingerprint keys the results; lookup reads it without tuning anything (exit 1 is
# a miss, which is fine).
rc=0
lookup=$("$tbtune" lookup "${specs[0]}" "${problem_args[@]}" --json) || rc=$?
[ "$rc" -le 1 ] || { echo "search-evidence: cannot identify GPU $device (tbtune lookup exited $rc)" >&2; exit 2; }
device_fp=$(python3 -c 'import json, sys; print(json.load(sys.stdin)["device"])' <<<"$lookup")
echo "search-evidence: $device_fp, cache $db"

failed=0 unfinished=0
for spec in "${specs[@]}"; do
  for mode in model exhaustive; do
    read -r model_done exhaustive_done < <(search_state "$spec" "$device_fp")
    done_now=$model_done
    [ "$mode" = exhaustive ] && done_now=$exhaustive_done
    [ "$done_now" = yes ] && continue
    # The exhaustive search comes after a complete model search, so it reuses every trial the
    # model search timed and the model search's wall time is its own.
    [ "$mode" = exhaustive ] && [ "$model_done" = no ] && break
    if [ "$time_limit" -gt 0 ] && [ "$(left)" -lt "$min_start_s" ]; then
      break 2
    fi
    rc=0
    run_tune "$spec" "$mode" || rc=$?
    case $rc in
      0) ;;
      124|130|137)  # stopped at the time limit (timeout's codes) or by a signal (tune's 130)
        echo "  stopped before the end; its trials so far are stored"
        break 2 ;;
      *)  # this spec failed; the others may still work
        echo "  tune failed (exit $rc): see its log" >&2
        failed=1
        break ;;
    esac
  done
done
# A run cut by --budget exits 0 with its search incomplete: whatever is open is for the next call.
for spec in "${specs[@]}"; do
  [ "$(search_state "$spec" "$device_fp")" = "yes yes" ] || unfinished=1
done

"$tbtune" report --db "$db" >"$out/report.txt"
"$tbtune" report --db "$db" --json >"$out/report.json"
cat "$out/report.txt"
if [ -n "$db_copy" ]; then
  # No tune runs now, so the file is consistent; a -wal file beside it is empty (left by the
  # read-only report) or, after a killed tune, holds commits: it goes along either way.
  mkdir -p "$(dirname "$db_copy")"
  cp "$db" "$db_copy"
  rm -f "$db_copy-wal"
  [ -f "$db-wal" ] && cp "$db-wal" "$db_copy-wal"
fi
if [ "$failed" -eq 1 ]; then
  echo "search-evidence: a tune failed (see $out/logs); run the same command again to retry it"
  exit 2
elif [ "$unfinished" -eq 1 ]; then
  echo "search-evidence: not finished; run the same command again to continue"
  exit 3
fi
echo "search-evidence: complete; report in $out/report.txt and $out/report.json"
