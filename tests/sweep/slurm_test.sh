#!/usr/bin/env bash
# The sweep scripts on a real Slurm: starts munged, slurmctld and slurmd for one node on
# loopback with a generated slurm.conf in a temporary folder, submits scripts/slurm/submit.sh as
# an array of 4 tasks over 8 problems with --compile-only (no GPU needed), requeues one task in
# the middle of its run and checks that it resumes, lets the merge job run through its
# dependency, and checks the merged cache: every problem once, integrity_check ok. Every daemon
# it started is stopped on any exit. Needs root; skips (exit 77) where the daemons cannot start.
#   usage: tests/sweep/slurm_test.sh TBTUNE_BINARY
set -euo pipefail
SKIP=77
tbtune=$(realpath "${1:?usage: slurm_test.sh TBTUNE_BINARY}")
root=$(cd "$(dirname "$0")/../.." && pwd)
started=$(date +%s)
skip() { echo "SKIP: $*"; exit $SKIP; }

[ "$(id -u)" -eq 0 ] || skip "needs root to start munged, slurmctld and slurmd"
if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
  echo "slurm_test: installing slurm-wlm and munge"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends slurm-wlm munge \
    >/dev/null 2>&1 || skip "slurm-wlm and munge are not installed and cannot be installed"
fi

tmp=$(mktemp -d /tmp/tbtune-slurm.XXXXXX)
chmod 755 "$tmp"
pids=()
cleanup() {
  local rc=$?
  if [ -n "${SLURM_CONF:-}" ] && [ -f "$SLURM_CONF" ]; then scancel --quiet -u root 2>/dev/null || true; fi
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do kill "${pids[$i]}" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  if [ $rc -ne 0 ] && [ $rc -ne $SKIP ]; then
    echo "--- slurmctld log"; tail -n 30 "$tmp/slurmctld.log" 2>/dev/null || true
    echo "--- slurmd log"; tail -n 30 "$tmp/slurmd.log" 2>/dev/null || true
    for f in "$tmp"/results/logs/*.log; do [ -f "$f" ] && { echo "--- $f"; tail -n 20 "$f"; }; done
  fi
  rm -rf "$tmp"
  echo "slurm_test: $(( $(date +%s) - started )) s wall"
  exit $rc
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# munge, with its own key, socket and files in the temporary folder.
mkdir -p "$tmp/munge"
chmod 700 "$tmp/munge"
dd if=/dev/urandom of="$tmp/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$tmp/munge/munge.key"
munged --force --key-file="$tmp/munge/munge.key" --socket="$tmp/munge/munge.sock" \
  --pid-file="$tmp/munge/munged.pid" --log-file="$tmp/munge/munged.log" \
  --seed-file="$tmp/munge/munged.seed" -F >"$tmp/munge/munged.out" 2>&1 &
pids+=($!)
for _ in $(seq 50); do [ -S "$tmp/munge/munge.sock" ] && break; sleep 0.1; done
[ -S "$tmp/munge/munge.sock" ] || skip "munged did not start"

host=$(hostname -s)
cpus=$(nproc)
mkdir -p "$tmp/state" "$tmp/spool"
export SLURM_CONF=$tmp/slurm.conf
cat > "$SLURM_CONF" <<CONF
ClusterName=tbtunetest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$tmp/munge/munge.sock
CredType=cred/munge
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
KillWait=30
SchedulerParameters=defer_batch=0
MinJobAge=600
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
slurmctld -D -c -f "$SLURM_CONF" >"$tmp/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" -N "$host" >"$tmp/slurmd.out" 2>&1 &
pids+=($!)
up=
for _ in $(seq 60); do
  if sinfo -h -o %T 2>/dev/null | grep -qE '^(idle|mixed|allocated)'; then up=1; break; fi
  sleep 0.5
done
[ -n "$up" ] || { cat "$tmp/slurmctld.out" "$tmp/slurmd.out"; skip "slurmctld/slurmd did not bring the node up"; }
echo "slurm_test: one-node Slurm up ($(sinfo -h -o '%P %D %T %c CPUs'))"

# 8 problems: 4 stencils x 2 dtypes; a small search (5 compiles each) keeps it short. No two
# problems share a kernel source, so every problem compiles for a while and the requeue below
# lands between two of them.
mkdir -p "$tmp/sweep"
cat > "$tmp/sweep/sweep.yaml" <<YAML
specs: [$root/configs/j2d5pt.yaml, $root/configs/j2ds9pt.yaml, $root/configs/j2d9pt.yaml, $root/configs/j2d25pt.yaml]
dtypes: [double, float]
domains: [[512, 512]]
steps: [100]
profile: h100
tune: {top: 1, within: 0, max_candidates: 1}
YAML
problems=$("$tbtune" sweep "$tmp/sweep/sweep.yaml" --list --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["problems"]))')
[ "$problems" -ge 8 ] || { echo "FAIL: expected >= 8 problems, got $problems"; exit 1; }

results=$tmp/results
out=$("$root/scripts/slurm/submit.sh" "$tmp/sweep/sweep.yaml" "$results" --tasks 4 --compile-only \
      --tbtune "$tbtune" -- --threads 1 -q)
echo "$out"
array=$(echo "$out" | sed -n 's/.*array job \([0-9]*\).*/\1/p')
merge=$(echo "$out" | sed -n 's/.*merge job \([0-9]*\).*/\1/p')

# Requeue task 1 once it has finished its first problem and is into its second.
log1=$results/logs/sweep-${array}_1.log
for _ in $(seq 600); do grep -q ': compiled {' "$log1" 2>/dev/null && break; sleep 0.5; done
grep -q ': compiled {' "$log1" || { echo "FAIL: task 1 finished no problem"; exit 1; }
scontrol requeue "${array}_1"
echo "slurm_test: requeued task ${array}_1 mid-run"
# A requeued job waits a while (its begin time is set ahead); let it start as soon as it is back.
for _ in $(seq 60); do
  [ "$(squeue -h -j "${array}_1" -o %T 2>/dev/null)" = PENDING ] && break
  sleep 0.5
done
scontrol update JobId="${array}_1" StartTime=now 2>/dev/null || true

for _ in $(seq 1200); do [ -z "$(squeue -h -j "$array,$merge" 2>/dev/null)" ] && break; sleep 1; done
[ -z "$(squeue -h -j "$array,$merge" 2>/dev/null)" ] || { echo "FAIL: jobs still queued after 20 min"; squeue; exit 1; }

echo "--- task 1's log (requeued)"; cat "$log1"
grep -q "got SIGTERM" "$log1" || { echo "FAIL: task 1 did not see the requeue's SIGTERM"; exit 1; }
grep -q "resumes from" "$log1" || { echo "FAIL: the requeued task 1 did not resume from its published cache"; exit 1; }
# Its first problem was compiled before the requeue: after it, every CUBIN is found, none compiled.
first=$(grep -m1 ': compiled {' "$log1" | sed 's/.*\(#[0-9]*\) .*/\1/')
grep "$first .*: compiled {" "$log1" | tail -n 1 | grep -q '"compiled":0' \
  || { echo "FAIL: the requeued task compiled problem $first again"; exit 1; }
echo "--- merge log"; cat "$results"/logs/merge-*.log

python3 - "$results/sweep.db" "$problems" <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
expected = int(sys.argv[2])
ok = db.execute("PRAGMA integrity_check").fetchone()[0]
rows = db.execute("SELECT count(*), count(DISTINCT stencil_hash || dtype || nx || ny || nz || steps) FROM compiles").fetchone()
stencils = db.execute("SELECT count(*) FROM stencils").fetchone()[0]
print(f"merged cache: integrity_check {ok}, {rows[0]} compile records ({rows[1]} distinct problems), {stencils} stencils")
assert ok == "ok", ok
assert rows[0] == expected, f"expected {expected} problems, found {rows[0]}"
assert rows[1] == rows[0], "a problem is recorded twice"
assert stencils == 4, stencils
PY

# The CUBIN folder is complete: compiling the whole sweep again compiles nothing.
again=$("$tbtune" sweep "$tmp/sweep/sweep.yaml" --compile-only --db "$tmp/again.db" --cubins "$results/cubins" --json -q 2>/dev/null)
echo "$again" | python3 -c '
import json, sys
s = json.load(sys.stdin)
n = sum(p["compiled"] for p in s["problems"])
found = sum(p["found"] for p in s["problems"])
print(f"compile-only over the whole sweep again: {n} compiled, {found} found")
assert n == 0 and s["exit_code"] == 0'
echo "PASS: slurm_test"
