#!/usr/bin/env bash
# The installed package as an application sees it: installs the `dev` component of BUILD_DIR into
# a temporary prefix, then builds, against that prefix only,
#   - tests/api/consumer with find_package(tbtune), and runs its CPU checks;
#   - a C program with `pkg-config --cflags --libs tbtune`, and runs it;
#   - examples/ (C++, C, Fortran heat equation), and runs each without a GPU: each must answer
#     with a miss reason (exit 3), and a corrupt cache with an error (exit 2), not crash.
#   usage: package_consumer_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
spec=$src/configs/j2d5pt.yaml
missing_db=$tmp/no-such-folder/tbtune.db

cmake --install "$build" --prefix "$prefix" --component dev >/dev/null
for f in lib/libtbtune.a include/tbtune/tbtune.hpp include/tbtune/tbtune.h include/tbtune/tbtune.f90 \
         lib/cmake/tbtune/tbtuneConfig.cmake lib/cmake/tbtune/tbtuneConfigVersion.cmake lib/pkgconfig/tbtune.pc; do
  [ -f "$prefix/$f" ] || { echo "FAIL: not installed: $f"; exit 1; }
done
# Public headers include only public headers.
if grep -hE '^\s*#\s*include\s*"' "$prefix"/include/tbtune/*.h* | grep -vE '"tbtune/'; then
  echo "FAIL: a public header includes a private one"; exit 1
fi

gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
cmake -S "$src/tests/api/consumer" -B "$tmp/consumer" "${gen[@]}" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$tmp/consumer" >/dev/null
"$tmp/consumer/consumer" "$spec" "$missing_db"
"$tmp/consumer/consumer_c" "$spec" "$missing_db"

# pkg-config, as a Makefile-built C application would link it.
PKG_CONFIG_PATH=$prefix/lib/pkgconfig
export PKG_CONFIG_PATH
cc -o "$tmp/consumer_pc" "$src/tests/api/consumer/consumer.c" $(pkg-config --cflags --libs tbtune)
"$tmp/consumer_pc" "$spec" "$missing_db" | tail -1

cmake -S "$src/examples" -B "$tmp/examples" "${gen[@]}" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$tmp/examples" >/dev/null
for example in heat_cpp heat_c heat_f90; do
  [ -x "$tmp/examples/$example" ] || { echo "FAIL: $example was not built"; exit 1; }
  rc=0
  TBTUNE_DB=$missing_db "$tmp/examples/$example" "$src/examples/heat.yaml" nearest || rc=$?
  [ "$rc" -eq 3 ] || { echo "FAIL: $example without a cache or GPU exited $rc, expected 3"; exit 1; }
  # A corrupt cache (a YAML file) is an error with a message, exit 2, not a crash.
  rc=0
  TBTUNE_DB=$src/examples/heat.yaml "$tmp/examples/$example" "$src/examples/heat.yaml" >"$tmp/out.txt" 2>&1 || rc=$?
  [ "$rc" -eq 2 ] && grep -q "cache" "$tmp/out.txt" ||
    { echo "FAIL: $example with a corrupt cache exited $rc: $(cat "$tmp/out.txt")"; exit 1; }
done
echo "package consumer: ok"
