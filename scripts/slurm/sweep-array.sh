#!/usr/bin/env bash
# One task of a tbtune sweep job array (submit with scripts/slurm/submit.sh; README "Sweeps on a
# cluster"). The task tunes its shard into a cache on node-local disk, never on the shared
# filesystem, and publishes it to $TBTUNE_RESULTS/shard-<task id>.db at the end and when Slurm
# stops it (scancel, requeue, time limit: SIGTERM). A requeued task starts from its published
# cache, so it times nothing twice.
#
# Environment (set by submit.sh): TBTUNE (the tbtune binary), TBTUNE_SWEEP (the sweep file),
# TBTUNE_RESULTS (shared results folder), TBTUNE_SWEEP_ARGS (more `tbtune sweep` options, e.g.
# --compile-only), TBTUNE_CUBINS (folder of compiled CUBINs; default $TBTUNE_RESULTS/cubins).
#SBATCH --job-name=tbtune-sweep
#SBATCH --requeue
#SBATCH --open-mode=append
set -uo pipefail

: "${TBTUNE:?}" "${TBTUNE_SWEEP:?}" "${TBTUNE_RESULTS:?}" "${SLURM_ARRAY_TASK_ID:?run this as a Slurm array task}"
task=$SLURM_ARRAY_TASK_ID
cubins=${TBTUNE_CUBINS:-$TBTUNE_RESULTS/cubins}
local_dir=$(mktemp -d "${TMPDIR:-/tmp}/tbtune-${SLURM_ARRAY_JOB_ID:-local}-$task.XXXXXX")
local_db=$local_dir/shard.db
published=$TBTUNE_RESULTS/shard-$task.db
mkdir -p "$TBTUNE_RESULTS" "$cubins"

# Resume: start from what an earlier run of this task published.
if [ -f "$published" ]; then
  cp "$published" "$local_db"
  echo "sweep-array: task $task resumes from $published"
fi

# `db merge` reads the local cache as one consistent snapshot (also while tbtune still writes
# it) into a new file next to the published one; rename() then replaces it in one step, so the
# results folder never holds half a cache.
publish() {
  [ -f "$local_db" ] || return 0
  local tmp=$published.tmp.$$
  rm -f "$tmp"
  if "$TBTUNE" db merge "$tmp" "$local_db" >/dev/null; then
    mv -f "$tmp" "$published" && echo "sweep-array: task $task published $published"
  else
    rm -f "$tmp"
    echo "sweep-array: task $task could not publish $local_db" >&2
  fi
}

child=
on_term() {
  echo "sweep-array: task $task got SIGTERM: stopping after the current candidate, publishing"
  [ -n "$child" ] && kill -TERM "$child" 2>/dev/null
  [ -n "$child" ] && wait "$child"
  publish
  rm -rf "$local_dir"
  exit 130
}
trap on_term TERM INT

# In the background, so that the trap runs as soon as the signal comes, not when tbtune ends.
# shellcheck disable=SC2086  # TBTUNE_SWEEP_ARGS is a list of options
"$TBTUNE" sweep "$TBTUNE_SWEEP" --db "$local_db" --cubins "$cubins" \
  --summary "$TBTUNE_RESULTS/summary-$task.json" ${TBTUNE_SWEEP_ARGS:-} &
child=$!
wait "$child"
rc=$?
child=
publish
rm -rf "$local_dir"
echo "sweep-array: task $task exit $rc"
exit "$rc"
