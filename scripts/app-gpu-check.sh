#!/usr/bin/env bash
# Application start-up on a real GPU (issue 20; not run by CI). Two steps:
#   on the build machine:  scripts/app-gpu-check.sh --pack [BUILD_DIR]   (default: build)
#     installs the package into a temporary prefix, builds examples/ against it, and copies the
#     binaries (stripped; static yaml-cpp, SQLite, cudart, libgfortran) into build-app/;
#   on the GPU machine:    scripts/app-gpu-check.sh [APP_DIR]            (default: build-app)
#     1. tunes examples/heat.yaml (4096 x 4096, 1000 steps) into a fresh cache;
#     2. runs the C++, C and Fortran examples: each must hit and equal the naive kernel;
#     3. each miss policy on another domain: fail (exit 3, other_domain), naive, nearest and
#        model (each equal to the naive kernel); nearest's and model's second start must be a
#        hit that compiles nothing (NVRTC made unloadable for it);
#     4. a faked driver change (TBTUNE_FAKE_DRIVER) served by nearest with a logged warning;
#     5. the in-process lookup benchmark: a process's first hit and a later one, medians <= 1 ms;
#     6. `tbtune lookup` as a process against a bare CUDA context creation (median of 7 each):
#        within 20 ms;
#     7. a hit with libnvrtc unloadable and off the library path.
# Prints one PASS or FAIL line per check with its numbers; exits 1 if any failed.
set -uo pipefail
cd "$(dirname "$0")/.."

if [ "${1:-}" = "--pack" ]; then
  set -e
  build=$(realpath "${2:-build}")
  out=build-app
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  cmake --install "$build" --prefix "$tmp/prefix" --component dev >/dev/null
  cmake -S examples -B "$tmp/examples" -G Ninja -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
  cmake --build "$tmp/examples" >/dev/null
  rm -rf "$out" && mkdir -p "$out"
  cp "$build/tbtune" "$build/bench/lookup_bench" "$build/bench/cuda_context" \
     "$tmp/examples/heat_cpp" "$tmp/examples/heat_c" "$tmp/examples/heat_f90" "$out/"
  strip "$out"/*
  # Debian ships Google Benchmark as a shared library only; the GPU machine has none.
  mkdir -p "$out/lib"
  cp -L "$(ldd "$out/lookup_bench" | awk '/libbenchmark/ {print $3}')" "$out/lib/"
  du -sh "$out"
  exit 0
fi

app=$(realpath "${1:-build-app}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export TBTUNE_DB=$work/cache.db
failures=0
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
# spec_with DOMAIN: heat.yaml with another domain, as a file in $work.
spec_with() {
  sed "s/^domain: .*/domain: [$1, $1]/" examples/heat.yaml >"$work/heat_$1.yaml"
  echo "$work/heat_$1.yaml"
}
ms_now() { date +%s%N; }

echo "== 1. tune examples/heat.yaml"
t0=$(ms_now)
# Without a GPU, tune prints the ranking and exits 0: the lookup says whether a winner was stored.
if "$app/tbtune" tune examples/heat.yaml --top 4 --within 0 --max-candidates 4 -q >"$work/tune.txt" 2>&1 &&
   "$app/tbtune" lookup examples/heat.yaml >>"$work/tune.txt" 2>&1; then
  pass "tune stored a winner ($(( ($(ms_now) - t0) / 1000000000 )) s): $(grep '^hit' "$work/tune.txt")"
else
  fail "tune: $(tail -3 "$work/tune.txt")"
fi

echo "== 2. the three examples hit and equal the naive kernel"
for e in heat_cpp heat_c heat_f90; do
  "$app/$e" examples/heat.yaml fail >"$work/$e.txt" 2>&1
  rc=$?
  if [ $rc = 0 ] && grep -q "hit" "$work/$e.txt"; then
    pass "$e: $(grep -E 'GCells/s' "$work/$e.txt" | head -1 | sed 's/^ *//'); $(grep -E '^ *PASS' "$work/$e.txt")"
  else
    fail "$e exited $rc: $(tail -3 "$work/$e.txt" | tr '\n' ' ')"
  fi
done

echo "== 3. miss policies on other domains"
spec=$(spec_with 4000)
"$app/heat_cpp" "$spec" fail >"$work/fail.txt" 2>&1
rc=$?
if [ $rc = 3 ] && grep -q "other_domain" "$work/fail.txt"; then pass "fail: no kernel, reason other_domain"
else fail "fail policy exited $rc: $(tail -2 "$work/fail.txt" | tr '\n' ' ')"; fi

spec=$(spec_with 3000)
"$app/heat_c" "$spec" naive >"$work/naive.txt" 2>&1
rc=$?
if [ $rc = 0 ] && grep -q "serves naive" "$work/naive.txt"; then pass "naive: served, equal to the naive kernel"
else fail "naive policy exited $rc: $(tail -2 "$work/naive.txt" | tr '\n' ' ')"; fi

for policy_domain in nearest:4000 model:3500; do
  policy=${policy_domain%:*}
  spec=$(spec_with "${policy_domain#*:}")
  t0=$(ms_now)
  TBTUNE_LOG_FALLBACK=1 "$app/heat_cpp" "$spec" "$policy" >"$work/$policy.txt" 2>&1
  rc=$?
  first_ms=$(( ($(ms_now) - t0) / 1000000 ))
  if [ $rc = 0 ] && grep -q "serves" "$work/$policy.txt" && grep -q "compiled and stored" "$work/$policy.txt"; then
    pass "$policy: first start served, stored, equal to the naive kernel (${first_ms} ms): $(grep -m1 '^tbtune:' "$work/$policy.txt" | cut -c1-220)"
  else
    fail "$policy first start exited $rc: $(tail -3 "$work/$policy.txt" | tr '\n' ' ')"
  fi
  # The second start must hit and compile nothing: NVRTC is made unloadable for it.
  t0=$(ms_now)
  TBTUNE_NVRTC=/nonexistent/libnvrtc.so "$app/heat_cpp" "$spec" "$policy" --no-check >"$work/$policy.2.txt" 2>&1
  rc=$?
  second_ms=$(( ($(ms_now) - t0) / 1000000 ))
  if [ $rc = 0 ] && grep -q "^lookup: hit" "$work/$policy.2.txt"; then
    pass "$policy: second start is a hit with no compile (${second_ms} ms)"
  else
    fail "$policy second start exited $rc: $(tail -2 "$work/$policy.2.txt" | tr '\n' ' ')"
  fi
done

echo "== 4. a faked driver change"
TBTUNE_FAKE_DRIVER=12080 TBTUNE_LOG_FALLBACK=1 "$app/heat_cpp" examples/heat.yaml nearest >"$work/driver.txt" 2>&1
rc=$?
if [ $rc = 0 ] && grep -q "^tbtune: miss (other_driver)" "$work/driver.txt"; then
  pass "driver change: served by nearest with a logged warning, equal to the naive kernel"
else
  fail "driver change exited $rc: $(tail -3 "$work/driver.txt" | tr '\n' ' ')"
fi

echo "== 5. in-process lookup benchmark (context created first)"
LD_LIBRARY_PATH="$app/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$app/lookup_bench" examples/heat.yaml 4096x4096 --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
  --benchmark_out="$work/bench.json" --benchmark_out_format=json >"$work/bench.txt" 2>&1
cat "$work/bench.txt" | grep -E "median|error" | sed 's/^/   /'
# BM_LookupHitFirst: a process's first hit (it opens the cache); BM_LookupHit: every later one
# (the process keeps its read-only connection). Both must be within 1 ms.
for bm in BM_LookupHitFirst BM_LookupHit; do
  hit_us=$(python3 -c "import json,sys; b=[x for x in json.load(open(sys.argv[1]))['benchmarks'] if x['name']==sys.argv[2]+'_median']; print('%.0f' % b[0]['real_time'] if b else 'none')" "$work/bench.json" "$bm" 2>/dev/null || echo none)
  if [ "$hit_us" != none ] && [ "$hit_us" -le 1000 ]; then pass "$bm median ${hit_us} us <= 1000 us"
  else fail "$bm median ${hit_us} us (limit 1000 us)"; fi
done

echo "== 6. tbtune lookup process vs a bare CUDA context (median of 7)"
median_ms() {  # median_ms CMD...: median wall time of 7 runs, in ms
  local times=()
  for _ in 1 2 3 4 5 6 7; do
    local s; s=$(ms_now); "$@" >/dev/null 2>&1; times+=($(( ($(ms_now) - s) / 1000000 )))
  done
  printf '%s\n' "${times[@]}" | sort -n | sed -n 4p
}
ctx=$(median_ms "$app/cuda_context")
look=$(median_ms "$app/tbtune" lookup examples/heat.yaml)
"$app/tbtune" lookup examples/heat.yaml >/dev/null 2>&1 || fail "tbtune lookup does not hit"
if [ $((look - ctx)) -le 20 ]; then pass "tbtune lookup ${look} ms, bare context ${ctx} ms (+$((look - ctx)) ms <= 20)"
else fail "tbtune lookup ${look} ms, bare context ${ctx} ms (+$((look - ctx)) ms > 20)"; fi

echo "== 7. a hit with libnvrtc unloadable and off the library path"
if ldd "$app/heat_cpp" "$app/tbtune" | grep -q nvrtc; then fail "a binary links libnvrtc"; fi
TBTUNE_NVRTC=/nonexistent/libnvrtc.so LD_LIBRARY_PATH= "$app/heat_cpp" examples/heat.yaml fail --no-check >"$work/nonvrtc.txt" 2>&1
rc=$?
if [ $rc = 0 ] && grep -q "^lookup: hit" "$work/nonvrtc.txt"; then pass "hit and run without NVRTC: $(grep GCells "$work/nonvrtc.txt")"
else fail "without NVRTC exited $rc: $(tail -2 "$work/nonvrtc.txt" | tr '\n' ' ')"; fi
TBTUNE_NVRTC=/nonexistent/libnvrtc.so "$app/heat_cpp" "$(spec_with 2500)" nearest --no-check >"$work/nonvrtc2.txt" 2>&1
rc=$?
if [ $rc = 2 ] && grep -q "cannot load NVRTC" "$work/nonvrtc2.txt"; then pass "a miss that must compile without NVRTC: a clear error (exit 2)"
else fail "miss without NVRTC exited $rc: $(tail -2 "$work/nonvrtc2.txt" | tr '\n' ' ')"; fi

echo "app-gpu-check: $failures failure(s)"
[ $failures = 0 ]
