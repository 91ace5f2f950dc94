#!/usr/bin/env bash
# smtile3d's generated kernels, run in the CPU emulator (scripts/emulate/run3d.sh) against a CPU
# reference. Cases: odd sizes, 1 to 7 z segments, a step count that leaves single steps, the
# ring and partial sums, z 1 and 2, radius 2, a stencil that is not affine, float and double.
# Usage: smtile3d_emulation_test.sh TBTUNE_BINARY
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
export TBTUNE=$1
run() { SEGS=$1 "$root/scripts/emulate/run3d.sh" "$2" smtile3d "${@:3}"; }
run 3 "$root/configs/j3d7pt.yaml" double 45 29 23 7 t=2 tx=32 ty=8 cy=2 z=1 sum=0
run 5 "$root/configs/j3d27pt.yaml" float 41 37 19 5 t=2 tx=32 ty=16 cy=2 z=2 sum=1
run 7 "$root/configs/j3d13pt.yaml" double 40 30 27 5 t=2 tx=32 ty=16 cy=4 z=1 sum=0
run 1 "$root/tests/specs/good/nonlinear3d.yaml" double 37 29 17 5 t=2 tx=32 ty=8 cy=2 z=1 sum=0
