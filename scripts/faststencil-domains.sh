# FastStencil's H100 domains of the configs, on which its figures were measured (docs/bench-2d.md,
# docs/bench-3d.md): sourced by the GPU scripts, which tune the configs on them. 3D: its
# parameter table's tiles x 6 and x 11, 2560 planes; j3d17pt, which it does not run, its
# config's own domain.
# shellcheck disable=SC2034  # used by the scripts that source this file
declare -A domain=([j2d5pt]=11616x11616 [j2d9pt]=9504x9504 [j2ds9pt]=9504x9504 [j2d25pt]=8448x8448
                   [j2d49pt]=9504x9504
                   [j3d7pt]=572x216x2560 [poisson]=360x308x2560 [j3d27pt]=540x220x2560 [j3d13pt]=572x216x2560
                   [j3d17pt]=384x352x2560)
