#!/usr/bin/env bash
# wpipe3d's generated kernels, run in the CPU emulator (scripts/emulate/run3d.sh) against a CPU
# reference: CI has no GPU, so this is where every run checks the template's planes, conveyor,
# y halo exchange, shuffles and boundaries. Cases: odd sizes with tiles that overhang the domain
# in x and y, step counts that leave a remainder (the cell step kernel, templates/step.cuh; in
# the 10-step case a rest pass of 2 stages x 2 levels, with the exchange, then nothing), several
# z segments, several levels per stage with several warps along y (the exchange between levels)
# and with one (no exchange), one level per stage with several warps along y (the barrier before the
# write-back), radius 2 and 4, a box, a general point set, a stencil that is not affine, float
# and double. A pass is two kernels: tb_full for the tiles that reach no ring cell, tb_edge for
# the frame of the others; the 150 x 90 case has 4 x 13 of the first and 38 of the second, the
# 48 x 45 case none of the first. The held planes' terms are summed late (after the barrier
# but the oldest plane's) except in the j3d27pt case (late=0: all before it). Where a head
# shuffles (the late 0, fold and box cases) each level's head of the next iteration follows its
# tail (TB_WP_EAGER); elsewhere it is summed at the iteration's top. Strips of 2 cells
# (float j3d27pt, double poisson and the 66 x 41 j3d7pt case, with the exchange) move in pairs.
# The last four sum the folded planes first (fold): poisson's mirrored planes with two levels
# per stage and the exchange, double and float; j3d17pt's, whose corner planes weigh 0.50 and
# 0.52 (the folded plane takes a multiply-add); and j3d27pt's, whose plane before is twice the
# output's own plane minus the plane after (both folded planes take it), in float.
# Usage: wpipe3d_emulation_test.sh TBTUNE_BINARY
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
export TBTUNE=$1
run() { SEGS=$1 "$root/scripts/emulate/run3d.sh" "$2" wpipe3d "${@:3}"; }
run 1 "$root/configs/j3d7pt.yaml" double 70 37 23 5 rx=1 cy=5 wy=3 warps=2 tw=2
run 2 "$root/configs/j3d7pt.yaml" double 70 37 23 10 rx=1 cy=5 wy=3 warps=2 tw=3
run 3 "$root/configs/j3d7pt.yaml" double 70 37 29 7 rx=1 cy=4 wy=2 warps=3 tw=1
run 2 "$root/configs/j3d27pt.yaml" float 45 41 19 5 rx=2 cy=3 wy=4 warps=2 tw=2 late=0
run 1 "$root/configs/j3d13pt.yaml" double 53 33 17 5 rx=1 cy=3 wy=4 warps=1 tw=2
run 2 "$root/configs/poisson.yaml" double 71 30 21 4 rx=2 cy=4 wy=1 warps=2 tw=1
run 2 "$root/configs/j3d7pt.yaml" double 66 41 19 5 rx=2 cy=4 wy=2 warps=2 tw=2
run 1 "$root/configs/j3d17pt.yaml" double 40 36 18 5 rx=1 cy=4 wy=3 warps=2 tw=1
run 1 "$root/tests/specs/good/nonlinear3d.yaml" float 40 30 16 3 rx=1 cy=2 wy=4 warps=1 tw=1
run 1 "$root/tests/specs/good/box3d_r4.yaml" double 48 45 20 3 rx=1 cy=4 wy=3 warps=1 tw=1
run 2 "$root/configs/j3d7pt.yaml" double 150 90 16 5 rx=1 cy=4 wy=2 warps=2 tw=1
run 1 "$root/tests/specs/good/points3d.yaml" double 44 40 20 5 rx=1 cy=3 wy=4 warps=2 tw=1
run 2 "$root/configs/poisson.yaml" double 53 41 19 7 rx=3 cy=3 wy=4 warps=2 tw=2 fold=1
run 1 "$root/configs/poisson.yaml" float 45 37 17 5 rx=2 cy=4 wy=2 warps=1 tw=2 fold=1
run 2 "$root/configs/j3d17pt.yaml" double 47 39 19 7 rx=2 cy=3 wy=4 warps=2 tw=2 fold=1
run 1 "$root/configs/j3d27pt.yaml" float 45 41 19 5 rx=3 cy=3 wy=2 warps=1 tw=2 fold=1
