#!/usr/bin/env bash
# The merge job of a tbtune sweep (submitted by scripts/slurm/submit.sh with
# --dependency=afterany on the array, so it runs however the tasks ended): joins the tasks'
# caches into $TBTUNE_RESULTS/sweep.db and says which tasks published none.
# Environment: TBTUNE, TBTUNE_RESULTS, TBTUNE_TASKS (the array's task ids, e.g. 0-3).
#SBATCH --job-name=tbtune-merge
set -uo pipefail
: "${TBTUNE:?}" "${TBTUNE_RESULTS:?}" "${TBTUNE_TASKS:?}"
"$TBTUNE" db merge "$TBTUNE_RESULTS/sweep.db" "$TBTUNE_RESULTS/shard-%a.db" --expect "$TBTUNE_TASKS"
rc=$?
echo "merge: exit $rc (0 all shards merged, 3 some missing, 2 error)"
exit "$rc"
