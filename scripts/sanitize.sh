#!/usr/bin/env bash
# Builds the CPU test suite with AddressSanitizer and UndefinedBehaviorSanitizer (GCC) in
# ./build-asan and runs it; any report fails the test that triggered it. Run by scripts/test.sh.
#   usage: scripts/sanitize.sh [BUILD_DIR]
# Left out (see docs/hardening.md): codegen_test and regs_survey_test (NVRTC, whose code is
# not instrumented; the Release suite runs them), the `gpu` label (it skips without a GPU, and CUDA's
# driver maps memory where ASan keeps its shadow), slurm_test (starts Slurm daemons; the Release
# suite runs it) and package_consumer_test (installs and rebuilds the package: no new code runs).
# read_only_test runs in two parts, below.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-asan}
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

# -O1 keeps the build and the run fast enough; no -Werror: GCC 12 warns falsely (maybe-
# uninitialized in <regex>, restrict in std::string) when sanitizers instrument the code.
flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
  -DTBTUNE_WERROR=OFF "${launcher[@]}" >/dev/null
cmake --build "$build" -j "$(nproc)"

# halt_on_error: the first report ends the test with a failure. Leaks are reported too.
# handle_segv=0 (and bus, fpe): the worker and engine tests plant crashes and check that the
# supervisor names the signal; ASan's own handler would turn them into "exit code 1". Memory
# errors are still caught by the instrumentation, not by that handler.
export ASAN_OPTIONS=halt_on_error=1:abort_on_error=0:detect_leaks=1:strict_string_checks=1:handle_segv=0:handle_sigbus=0:handle_sigfpe=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# The instrumented code runs several times slower: the spec limits' time bounds (which catch
# quadratic work, not a slow machine) are scaled (tests/spec/limits_test.cpp).
export TBTUNE_TEST_TIME_SCALE=10
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" -LE gpu \
  -E '^(codegen_test|regs_survey_test|slurm_test|package_consumer_test|read_only_test)$'
# read_only_test whole: under ctest, after all of its tests pass, LeakSanitizer's own tracer
# crashes at exit ("Tracer caught signal 11"; its ReadOnly tests fork, its Nvrtc test loads
# NVRTC). Each part alone exits clean, so both still run sanitized.
for part in '-Nvrtc.*' 'Nvrtc.*'; do
  GTEST_FILTER=$part ctest --test-dir "$build" --output-on-failure -R '^read_only_test$'
done
