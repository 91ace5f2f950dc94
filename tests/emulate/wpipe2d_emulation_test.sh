#!/usr/bin/env bash
# wpipe2d's generated kernels, run in the CPU emulator (scripts/emulate/run2d.sh) against a CPU
# reference: CI has no GPU, so this is where every run checks the template's rows, rings,
# shuffles and boundaries. Cases: odd sizes, step counts that leave a remainder, 2 rows per
# iteration, a radius larger than rx (halos from lanes two away), radius 4, a stencil that is not
# affine, float and double. A pass is two kernels: tb_full's BLOCKS blocks share the tiles
# between the first and the last away from the ring's rows, tb_edge's EDGE blocks those two
# tiles (with the column tests only where the stencil is small: j2d5pt, j2ds9pt, j2d9pt, a
# second loop) and every tile's bands near the top and bottom ring rows (with the row tests
# too); the counts are chosen so that shares cross from one tile into the next and end
# mid-tile, near the top and bottom ring rows too (the first case fails if tb_full skips the
# ring rows' test, or if tb_edge runs its bands with the column tests only). In the 171-column
# case the third of 4 tiles would reach 3 columns past the ring's first and is clamped short of it
# (without the clamp the case fails), and there as in most cases the last tile overlaps the one
# before it, whose columns it must not write again. In the 201 x 15 case shares are a few rows
# long; in the 100-column case there are only the first and last tiles. In the second nonlinear
# case a tb_edge block runs a tile's rows and then two bands: without a barrier between its
# segments, its warps refill the ring while others still read it (the case fails). Two cases run split 0:
# one kernel, every block with the ring's tests. The held rows' terms are summed late (after
# the barrier but the oldest row's) except in one case (late=0: all before it). Where a head
# shuffles and an iteration takes one row (the j2d9pt, general2d_r4, j2d49pt cases of one row and
# the float fold case) each level's heads of the next iteration follow its tail (TB_WP_EAGER);
# elsewhere they are summed at the iteration's top. The four sep
# cases sum j2d49pt's separable rows across once each in every kernel, the ring's cells read
# again from the input (the cases fail if a ring row's or column's read is off): split 1
# (tb_full's tiles 2 of 4, the first and last tiles' rows in a loop with the column tests
# only) with rows 1 and 2 per iteration, double and float, and split 0; the 11-step cases end
# with a rest pass of depth 2, which sums rows too. The two
# fold cases sum j2d25pt's mirrored rows first in every kernel (the ring's too), split 1 with 2
# rows and 2 levels per warp, and split 0 in float; at radius 1 (tests/specs/good/folded2d.yaml,
# whose row above is twice its own row minus its row below: both folded rows take it with a
# multiply-add) with 2 rows per iteration, whose second output row sums its own row after the
# barrier. A group's rows go to the block's threads in equal shares (WpTraffic): where a row's
# threads do not divide its cells (rx 5 with 3 warps), where some hold no cell of it (rx 2 with 4
# warps) and where the rows do not divide the threads (3 rows, 1 and 2 warps), the ring's
# traffic skips the cells they lack (WpTraffic::mine): copied anyway, they run past the ring,
# which the emulator traps, as it traps a copy from outside the input array (a row past the last
# one not clamped). In the rx 17 case a one-warp pass's thread holds 34 cells of a group, more
# than a word's bits: its column tests are worked out per cell (WpTraffic::kMasks). The steps a
# run's passes leave over run in the cell step kernel (templates/step.cuh).
# Usage: wpipe2d_emulation_test.sh TBTUNE_BINARY
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
export TBTUNE=$1
run() { BLOCKS=$1 EDGE=$2 "$root/scripts/emulate/run2d.sh" "${@:3}"; }
run 3 5 "$root/configs/j2d5pt.yaml" double 201 121 7 rx=2 warps=2 tw=1 rows=1
run 3 5 "$root/configs/j2d5pt.yaml" double 173 131 11 rx=5 warps=3 tw=2 rows=2
run 2 3 "$root/configs/j2d5pt.yaml" double 171 53 9 rx=2 warps=2 tw=2 rows=1 split=0
run 2 3 "$root/configs/j2ds9pt.yaml" double 151 67 11 rx=1 warps=2 tw=1 rows=2
run 2 3 "$root/configs/j2d9pt.yaml" float 331 77 13 rx=3 warps=2 tw=3 rows=1 late=0
run 2 3 "$root/tests/specs/good/general2d_r4.yaml" double 163 89 5 rx=3 warps=2 tw=1 rows=1
run 1 2 "$root/tests/specs/good/nonlinear.yaml" float 111 57 9 rx=3 warps=3 tw=1 rows=1
run 1 4 "$root/tests/specs/good/nonlinear.yaml" double 201 121 11 rx=3 warps=2 tw=2 rows=2
run 2 3 "$root/configs/j2d49pt.yaml" double 151 61 5 rx=4 warps=2 tw=1 rows=1
run 2 3 "$root/configs/j2d49pt.yaml" double 271 61 5 rx=8 warps=2 tw=1 rows=1 split=0
run 7 4 "$root/configs/j2d5pt.yaml" double 201 15 9 rx=2 warps=4 tw=2 rows=1
run 2 3 "$root/configs/j2d5pt.yaml" float 100 41 5 rx=2 warps=2 tw=1 rows=1
run 3 2 "$root/configs/j2d49pt.yaml" double 401 61 9 rx=4 warps=2 tw=2 rows=1 split=1 sep=1
run 3 2 "$root/configs/j2d49pt.yaml" float 301 77 7 rx=3 warps=2 tw=1 rows=2 split=1 sep=1 late=0
run 2 3 "$root/configs/j2d49pt.yaml" double 211 59 11 rx=4 warps=3 tw=1 rows=2 split=0 sep=1
run 3 2 "$root/configs/j2d49pt.yaml" float 331 71 11 rx=5 warps=3 tw=1 rows=1 split=1 sep=1
run 3 2 "$root/configs/j2d25pt.yaml" double 271 67 9 rx=3 warps=2 tw=2 rows=2 fold=1
run 2 3 "$root/configs/j2d25pt.yaml" float 233 53 11 rx=5 warps=3 tw=1 rows=1 split=0 fold=1
run 3 2 "$root/tests/specs/good/folded2d.yaml" float 133 47 9 rx=2 warps=3 tw=2 rows=2 fold=1
run 3 2 "$root/configs/j2d5pt.yaml" float 1201 41 5 rx=17 warps=1 tw=2 rows=2
run 2 3 "$root/configs/j2d5pt.yaml" double 211 71 7 rx=3 warps=2 tw=1 rows=3
run 2 3 "$root/configs/j2d5pt.yaml" double 211 71 7 rx=3 warps=1 tw=2 rows=3
