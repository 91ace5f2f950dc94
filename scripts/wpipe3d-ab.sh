#!/usr/bin/env bash
# Times fixed wpipe3d shapes against each other on a GPU machine, in rounds that alternate their
# order (the H200's power cap moves a shape's figure between runs; docs/tuning.md): each
# argument SPEC:PARAMS is one `tbtune tune configs/SPEC.yaml --strategy wpipe3d --search
# exhaustive --param ...` of that shape alone on FastStencil's domain of the config (j3d17pt its
# own), 100 steps, spills allowed, a fresh cache each, its winner verified. The tune times every
# shape of the space whose parameters include the given ones (leave out `late` and both ways are
# timed). One line per trial and round: the round, the argument, GCells/s, the status, tb_full's
# registers and spilled bytes; every JSON in OUT_DIR. Exit status 1 if a tune timed nothing.
# Usage: [DTYPE=float] [ROUNDS=2] scripts/wpipe3d-ab.sh BUILD_DIR OUT_DIR SPEC:rx=2,cy=7,... ...
set -uo pipefail
cd "$(dirname "$0")/.."
build=$1 out=$2
shift 2
[ -x "$build/tbtune" ] || { echo "wpipe3d-ab: no $build/tbtune" >&2; exit 2; }
[ $# -gt 0 ] || { echo "wpipe3d-ab: no shapes given" >&2; exit 2; }
mkdir -p "$out"
source scripts/faststencil-domains.sh
for v in "$@"; do
  spec=${v%%:*}
  [[ ${domain[$spec]:-} == *x*x* ]] || { echo "wpipe3d-ab: '$spec' is not a 3D config with a domain in scripts/faststencil-domains.sh" >&2; exit 2; }
done
shapes=("$@") failed=0
for ((round = 1; round <= ${ROUNDS:-2}; ++round)); do
  order=("${shapes[@]}")
  if ((round % 2 == 0)); then  # even rounds backwards
    order=()
    for ((i = ${#shapes[@]} - 1; i >= 0; --i)); do order+=("${shapes[i]}"); done
  fi
  for v in "${order[@]}"; do
    spec=${v%%:*} params=${v#*:}
    args=()
    for p in ${params//,/ }; do args+=(--param "$p"); done
    name="$spec-${params//[,=]/}-r$round"
    db=$(mktemp -d)/t.db
    "$build/tbtune" tune "configs/$spec.yaml" --domain "${domain[$spec]}" --steps 100 --dtype "${DTYPE:-double}" \
      --strategy wpipe3d --search exhaustive --allow-spills --no-probe "${args[@]}" --db "$db" --json \
      > "$out/$name.json" 2> "$out/$name.err" || failed=1
    python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
t = [x for x in d.get("trials", []) if x["strategy"] == "wpipe3d"]
for x in t:
    print(sys.argv[2], sys.argv[3], round(x["gcells"], 1), x["status"], x["registers"], "regs", x["spill_bytes"], "B")
t or print(sys.argv[2], sys.argv[3], "failed:", d.get("message", "no trial"))
sys.exit(0 if t else 1)' \
      "$out/$name.json" "$round" "$v" 2>/dev/null || { [ -s "$out/$name.json" ] || echo "$round $v: failed ($(tail -n 1 "$out/$name.err"))"; failed=1; }
  done
done
exit $failed
