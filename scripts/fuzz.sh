#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz/ with clang (-fsanitize=fuzzer,address,undefined)
# and runs each for a bounded time. Each target links only the layers it reads: the spec target
# the spec layer; the cache target the cache and what it stores (spec, model, record, codegen's
# parameter helpers), as static libraries, so nothing it does not call is linked in.
#   usage: scripts/fuzz.sh [-t SECONDS] [-n RUNS] [-j JOBS] [-b BUILD_DIR] [TARGET...]
#   TARGET: spec, cache, sweep (default: all). -t: seconds per target (default 60). -n: stop
#   after RUNS executions instead, if that comes first (a long run: -n 10000000). -j: fuzzing
#   processes per target (default 1). The corpus grows in BUILD_DIR/corpus/TARGET across runs
#   (seeded each run from configs/, tests/specs/ or a generated cache); inputs that crash are
#   written to BUILD_DIR/findings/TARGET/ and make the script exit 1. docs/hardening.md says how
#   to do a long run.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=60
runs=
jobs=1
build=build-fuzz
while getopts "t:n:j:b:" opt; do
  case $opt in
    t) seconds=$OPTARG ;;
    n) runs=$OPTARG ;;
    j) jobs=$OPTARG ;;
    b) build=$OPTARG ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(spec cache sweep)

# Allocation and free stacks of 2 frames (ASan's default is 30). yaml-cpp, libstdc++, libc and
# SQLite have no frame pointers, so ASan's fast unwinder reads garbage past their frames, and it
# keeps every distinct stack for good: the sweep target's RSS grew that way by about 0.1 MB per
# 1,000 executions, towards the 1 GB limit below. Checks are the same; the error's own stack is
# whole, and BUILD_DIR/TARGET_fuzz FILE (without this setting) shows full allocation stacks.
export ASAN_OPTIONS=${ASAN_OPTIONS:-malloc_context_size=2}

cxx=${CXX_FUZZ:-clang++}
launcher=()
command -v ccache >/dev/null && launcher=(ccache)
# -O1 -g: fast enough to fuzz, and reports name lines. Library objects get coverage hooks
# (fuzzer-no-link); only the final link brings in libFuzzer's main.
flags=(-std=c++20 -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined
       -fno-sanitize-recover=all -I. -Iinclude -DFMT_HEADER_ONLY=1 -DTBTUNE_VERSION=\"fuzz\")

mkdir -p "$build/obj"

# layer_lib NAME SOURCES...: compiles SOURCES into $build/libNAME.a (only what changed).
layer_lib() {
  local name=$1
  shift
  local objs=()
  for src in "$@"; do
    local obj="$build/obj/${src//\//_}.o"
    if [ ! -f "$obj" ] || [ "$src" -nt "$obj" ] || [ -n "$(find tuner/spec db model tuner/record tuner/codegen tuner/sweep -name '*.hpp' -newer "$obj" -print -quit)" ]; then
      "${launcher[@]}" "$cxx" "${flags[@]}" -fsanitize=fuzzer-no-link -c "$src" -o "$obj"
    fi
    objs+=("$obj")
  done
  rm -f "$build/lib$name.a"
  ar qc "$build/lib$name.a" "${objs[@]}"
}

# Sources of one layer, as its CMake list names them (the folder may hold files in progress).
cmake_list() {
  sed -n 's/^ *\(\(tuner\|db\|model\)\/[A-Za-z0-9_/]*\.cpp\).*/\1/p' "$1"
}

build_target() {
  case $1 in
    spec)
      layer_lib fuzz_spec tuner/spec/*.cpp
      "$cxx" "${flags[@]}" -fsanitize=fuzzer tests/fuzz/spec_fuzz.cpp "$build/libfuzz_spec.a" \
        -lyaml-cpp -o "$build/spec_fuzz" ;;
    cache)
      layer_lib fuzz_spec tuner/spec/*.cpp
      layer_lib fuzz_cache $(cmake_list db/sources.cmake) tuner/record/*.cpp model/*.cpp \
        tuner/codegen/strategy.cpp
      local libs=("$build/libfuzz_cache.a" "$build/libfuzz_spec.a" -lsqlite3 -lyaml-cpp)
      "$cxx" "${flags[@]}" -fsanitize=fuzzer tests/fuzz/cache_fuzz.cpp "${libs[@]}" -o "$build/cache_fuzz"
      "$cxx" "${flags[@]}" tests/fuzz/cache_seed.cpp "${libs[@]}" -o "$build/cache_seed" ;;
    sweep)
      layer_lib fuzz_spec tuner/spec/*.cpp
      layer_lib fuzz_sweep tuner/sweep/sweep_file.cpp tuner/record/*.cpp model/*.cpp \
        tuner/codegen/strategy.cpp
      "$cxx" "${flags[@]}" -fsanitize=fuzzer tests/fuzz/sweep_fuzz.cpp "$build/libfuzz_sweep.a" \
        "$build/libfuzz_spec.a" -lyaml-cpp -o "$build/sweep_fuzz" ;;
    *) echo "fuzz: unknown target '$1' (have: spec, cache, sweep)" >&2; exit 2 ;;
  esac
}

seed_target() {
  local seeds="$build/seeds/$1"
  rm -rf "$seeds"
  mkdir -p "$seeds"
  case $1 in
    spec) cp configs/*.yaml tests/specs/good/*.yaml tests/specs/bad/*.yaml "$seeds/" ;;
    cache) "$build/cache_seed" "$seeds/j2d5pt.db" configs/j2d5pt.yaml
           rm -f "$seeds"/*.db-wal "$seeds"/*.db-shm ;;
    sweep) cp tests/fuzz/sweep_seeds/*.yaml "$seeds/" ;;
  esac
}

status=0
for t in "${targets[@]}"; do
  start=$(date +%s)
  build_target "$t"
  seed_target "$t"
  corpus="$build/corpus/$t"
  findings="$build/findings/$t"
  mkdir -p "$corpus" "$findings"
  log="$build/$t.log"
  echo "fuzz: $t for ${seconds}s x $jobs (built in $(($(date +%s) - start))s; log $log)"
  # -timeout: one input taking 5 s is a hang. -rss_limit_mb: 1 GB is a leak or a blow-up (the
  # CLI's own bound is 256 MB; ASan's shadow needs the rest). The longest input is libFuzzer's
  # default (4 KB, or the largest seed): long inputs are tests/spec/limits_test.cpp's job, and
  # short ones run many times faster.
  args=(-max_total_time="$seconds" -timeout=5 -rss_limit_mb=1024
        -artifact_prefix="$findings/" -print_final_stats=1)
  if [ -n "$runs" ]; then args+=(-runs="$runs"); fi
  if [ "$jobs" -gt 1 ]; then args+=(-fork="$jobs" -ignore_crashes=0); fi
  if ! TBTUNE_SOURCE_DIR=$PWD "$build/${t}_fuzz" "${args[@]}" "$corpus" "$build/seeds/$t" >"$log" 2>&1; then
    echo "fuzz: $t FOUND A PROBLEM; inputs in $findings/, last lines of $log:" >&2
    tail -n 30 "$log" >&2
    status=1
  fi
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | awk '{s+=$1} END {print s+0}')
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | awk '{s+=$1} END {print s+0}')
  rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | awk '$1>m {m=$1} END {print m+0}')
  echo "fuzz: $t: $execs executions ($rate/s, peak RSS $rss MB), corpus folder" \
       "$(find "$corpus" -type f | wc -l) files, $(du -sk "$corpus" | cut -f1) KB," \
       "$(($(date +%s) - start))s in all"
done
exit $status
