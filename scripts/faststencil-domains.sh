# FastStencil's H100 domains of the 2D configs, on which its figures were measured
# (docs/bench-2d.md): sourced by the 2D GPU scripts, which tune the configs on them.
# shellcheck disable=SC2034  # used by the scripts that source this file
declare -A domain=([j2d5pt]=11616x11616 [j2d9pt]=9504x9504 [j2ds9pt]=9504x9504 [j2d25pt]=8448x8448
                   [j2d49pt]=9504x9504)
