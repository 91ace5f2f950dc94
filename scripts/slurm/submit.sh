#!/usr/bin/env bash
# Submits a tbtune sweep to Slurm: a job array of N tasks (scripts/slurm/sweep-array.sh), each
# tuning one shard of the sweep, and a merge job (scripts/slurm/merge.sh) that runs after the
# array however it ended (afterany). Prints the two job ids.
#
#   scripts/slurm/submit.sh SWEEP RESULTS [--tasks N] [--compile-only] [--tbtune PATH]
#                           [--sbatch "ARGS"] [-- SWEEP OPTIONS...]
#
# RESULTS is a folder on the shared filesystem: shard-<id>.db, summary-<id>.json, logs/,
# cubins/ and, after the merge, sweep.db. --compile-only submits the CPU pass (no GPU asked
# for); otherwise each task asks for one GPU (--gres=gpu:1; for N per task give
# --sbatch "--gres=gpu:N" and -- --gpus N). --sbatch passes options such as
# "--partition=gpu --time=02:00:00" to both jobs. Options after -- go to `tbtune sweep`.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
usage() { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
[ $# -ge 2 ] || usage
sweep=$(realpath "$1"); results=$(realpath -m "$2"); shift 2
tasks=4; compile_only=; sbatch_args=; tbtune=$(command -v tbtune || true); sweep_args=()
while [ $# -gt 0 ]; do
  case $1 in
    --tasks) tasks=$2; shift 2 ;;
    --compile-only) compile_only=1; shift ;;
    --tbtune) tbtune=$2; shift 2 ;;
    --sbatch) sbatch_args=$2; shift 2 ;;
    --) shift; sweep_args=("$@"); break ;;
    *) echo "submit.sh: unknown option '$1'" >&2; usage ;;
  esac
done
[ -n "$tbtune" ] || { echo "submit.sh: tbtune not found on PATH: give --tbtune PATH" >&2; exit 2; }
tbtune=$(realpath "$tbtune")
# Check the sweep file here, on the login node, rather than in every task.
"$tbtune" sweep "$sweep" --list >/dev/null

mkdir -p "$results/logs"
ids=0-$((tasks - 1))
extra=${sweep_args[*]:-}
gres=--gres=gpu:1
[ -n "$compile_only" ] && { extra="--compile-only $extra"; gres=; }
# GPUs asked for in --sbatch (several per task, with `-- --gpus N`) replace the default one.
case " $sbatch_args" in *" --gres"* | *" --gpus"* | *" -G"*) gres= ;; esac
export TBTUNE="$tbtune" TBTUNE_SWEEP="$sweep" TBTUNE_RESULTS="$results" TBTUNE_SWEEP_ARGS="$extra" TBTUNE_TASKS="$ids"
# shellcheck disable=SC2086  # sbatch_args and gres are lists of options
array=$(sbatch --parsable --array="$ids" $gres $sbatch_args --export=ALL \
  --output="$results/logs/sweep-%A_%a.log" "$here/sweep-array.sh")
array=${array%%;*}
# shellcheck disable=SC2086
merge=$(sbatch --parsable --dependency="afterany:$array" $sbatch_args --export=ALL \
  --output="$results/logs/merge-%j.log" "$here/merge.sh")
merge=${merge%%;*}
echo "submitted: array job $array (tasks $ids), merge job $merge (after the array); results in $results"
