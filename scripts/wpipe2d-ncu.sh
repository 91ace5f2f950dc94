#!/usr/bin/env bash
# Nsight Compute on wpipe2d candidates (docs/bench-2d.md): per candidate the launch, occupancy,
# speed-of-light, scheduler, warp-state, instruction, compute and memory workload and source
# (SASS) sections of its first tb_full and tb_edge launches, STEPS steps (default 32; at least the
# candidate's depth) on FastStencil's domain, clocks left alone. Reports and CSV pages go to
# OUT_DIR as one tarball. One launch per launch configuration: the naive reference (256
# threads, no shared memory) comes first, then the candidate.
# Usage: [STRATEGY=wpipe3d] [STEPS=32] [DTYPE=float] scripts/wpipe2d-ncu.sh BUILD_DIR OUT_DIR SPEC:DOMAIN:PARAMS ...
#   PARAMS as rx=7,tw=2,warps=8,rows=1,bps=1 (STRATEGY: the candidates' strategy, default wpipe2d;
#   DTYPE: their type, default the spec's)
set -uo pipefail
cd "$(dirname "$0")/.."
build=$1 out=$2
shift 2
mkdir -p "$out"
work=$(mktemp -d)
for c in "$@"; do
  IFS=: read -r spec domain params <<<"$c"
  name="$spec-${params//[=,]/_}"
  args=()
  for p in ${params//,/ }; do args+=(--param "$p"); done
  start=$SECONDS
  ncu --target-processes all --clock-control none -k regex:"tb_(full|edge)" --filter-mode per-launch-config --launch-count 1 \
    --section LaunchStats --section Occupancy --section SpeedOfLight --section SchedulerStats \
    --section WarpStateStats --section InstructionStats --section ComputeWorkloadAnalysis \
    --section MemoryWorkloadAnalysis --section SourceCounters -f -o "$work/$name" \
    "$build/tbtune" tune "configs/$spec.yaml" --domain "$domain" --steps "${STEPS:-32}" ${DTYPE:+--dtype "$DTYPE"} --db "$work/$name.db" \
    --strategy "${STRATEGY:-wpipe2d}" "${args[@]}" --no-probe -q > "$work/$name.log" 2>&1
  echo "$name: exit $? in $((SECONDS - start)) s"
  ncu --import "$work/$name.ncu-rep" --page details --csv > "$work/$name-details.csv" 2>&1
  ncu --import "$work/$name.ncu-rep" --page source --csv --print-source sass > "$work/$name-sass.csv" 2>&1
  python3 - "$work/$name-details.csv" <<'PY'
import csv, sys
keep = ("Block Size", "Registers Per Thread", "Duration", "Achieved Occupancy", "Issue Slots Busy",
        "No Eligible", "Executed Ipc Active", "Warp Cycles Per Issued Instruction", "Executed Instructions",
        "FP64", "Compute (SM) Throughput", "Memory Throughput", "Theoretical Occupancy", "Waves Per SM",
        "Avg. Active Threads Per Warp", "Stall")
for row in csv.DictReader(open(sys.argv[1])):
    if any(k in row.get("Metric Name", "") for k in keep):
        print("  ", row.get("ID"), row.get("Metric Name"), row.get("Metric Value"), row.get("Metric Unit"))
PY
done
tar czf "$out/wpipe2d-ncu.tgz" -C "$work" .
ls -la "$out"
