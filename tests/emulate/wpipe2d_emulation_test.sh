#!/usr/bin/env bash
# wpipe2d's generated kernels, run in the CPU emulator (scripts/emulate/run2d.sh) against a CPU
# reference: CI has no GPU, so this is where every run checks the template's rows, rings,
# shuffles and boundaries. Cases: odd sizes, step counts that leave a remainder, several y
# segments, 2 rows per iteration, a radius larger than rx (halos from lanes two away), radius 4,
# a stencil that is not affine, float and double. Tiles: the first and the last of every case
# keep the boundary ring at their fixed cells; the first case has 4 tiles (two between, plain),
# the second 2; in the 171-column case the third of 4 tiles would reach 3 columns past the ring's
# first and is clamped short of it (without the clamp the case fails), and there as in most
# cases the last tile overlaps the one before it, whose columns it must not write again. Blocks
# away from the ring run the loop without its tests (the middle tiles of the middle segment in
# the first case; a wrong bound on "away" fails it); the j2d49pt rx 8 case's body (2744
# multiply-adds) is over the limit for that second loop (TB_WP_PLAIN 0).
# Usage: wpipe2d_emulation_test.sh TBTUNE_BINARY
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
export TBTUNE=$1
run() { SEGS=$1 "$root/scripts/emulate/run2d.sh" "${@:2}"; }
run 3 "$root/configs/j2d5pt.yaml" double 201 121 7 rx=2 warps=2 tw=1 rows=1
run 3 "$root/configs/j2d5pt.yaml" double 173 131 11 rx=5 warps=3 tw=2 rows=2
run 2 "$root/configs/j2d5pt.yaml" double 171 53 9 rx=2 warps=2 tw=2 rows=1
run 2 "$root/configs/j2ds9pt.yaml" double 151 67 11 rx=1 warps=2 tw=1 rows=2
run 2 "$root/configs/j2d9pt.yaml" float 331 77 13 rx=3 warps=2 tw=3 rows=1
run 2 "$root/tests/specs/good/general2d_r4.yaml" double 163 89 5 rx=3 warps=2 tw=1 rows=1
run 1 "$root/tests/specs/good/nonlinear.yaml" float 111 57 9 rx=3 warps=3 tw=1 rows=1
run 2 "$root/configs/j2d49pt.yaml" double 151 61 5 rx=4 warps=2 tw=1 rows=1
run 2 "$root/configs/j2d49pt.yaml" double 271 61 5 rx=8 warps=2 tw=1 rows=1
