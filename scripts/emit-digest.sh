#!/usr/bin/env bash
# Prints one line per candidate of every spec given (default: configs/*.yaml), in float and
# double: "spec dtype strategy params sha256-of-generated-CUDA". Two builds that print the same
# lines generate byte-identical kernels for every candidate the model ranks: the check that a
# refactoring changed no kernel. Needs no GPU.
#   usage: scripts/emit-digest.sh [-b BUILD_DIR] [SPEC...] > digest.txt
set -euo pipefail
cd "$(dirname "$0")/.."
build=build
if [ "${1:-}" = "-b" ]; then build=$2; shift 2; fi
tbtune="$build/tbtune"
[ -x "$tbtune" ] || { echo "emit-digest: no $tbtune (build first)" >&2; exit 2; }
specs=("$@")
[ ${#specs[@]} -gt 0 ] || specs=(configs/*.yaml)

for spec in "${specs[@]}"; do
  for dtype in float double; do
    # Every ranked candidate as "strategy<TAB>--param k=v ...".
    "$tbtune" model "$spec" --dtype "$dtype" --json --top 1000000 |
      jq -r '.candidates[] | [.strategy, (.params | to_entries | map("--param \(.key)=\(.value)") | join(" "))] | @tsv' |
      while IFS=$'\t' read -r strategy params; do
        # shellcheck disable=SC2086 # params is a list of flags
        sum=$("$tbtune" emit "$spec" --dtype "$dtype" --strategy "$strategy" $params --no-compile | sha256sum)
        echo "$spec $dtype $strategy ${params//--param /} ${sum%% *}"
      done
  done
done
