#pragma once
/// @file derived.hpp
/// Quantities derived from the model in thesis sections 5.6.2, 5.7 and 5.9, as plain functions,
/// each named after its equation. Units: bandwidths and flop rates from DeviceProfile (bytes/s,
/// flop/s), tiles and depths in cells and steps, footprints in bytes. Where the thesis' worked
/// numbers disagree with its equations the equations win; docs/model.md lists the differences.
#include "model/device_profile.hpp"
#include "tuner/spec/spec.hpp"

namespace tbtune {

/// Eq. 5.8: valid share of 2D overlapped SM tiling, (tile_x - 2 t rad) / tile_x, clamped to
/// [0, 1] (a tile narrower than its halos computes nothing valid).
[[nodiscard]] double overlapped_valid_2d(int tile_x, int t, int radius);

/// Eq. 5.9: valid share of 3D overlapped SM tiling (x-y tile streamed in z), each factor clamped
/// at 0 so two too-narrow sides cannot multiply to a positive share.
[[nodiscard]] double overlapped_valid_3d(int tile_x, int tile_y, int t, int radius);

/// Eq. 5.11: valid share of device tiling, T / (T + T_sync x n), for work of `work_s` seconds
/// between `syncs` grid-wide syncs of `sync_s` seconds each.
[[nodiscard]] double devtile_valid(double work_s, double sync_s, double syncs);

/// Machine balance in flop per byte of global traffic, THR / B_gm (the thesis' chapter 3 figure,
/// 6.24 for the A100 in double).
[[nodiscard]] double machine_balance(const DeviceProfile& d, DType dtype);

/// Machine balance in flop per cell moved, THR / B_gm x S_cell: the "balance" of section 5.9
/// (49.9 for the A100 in double).
[[nodiscard]] double machine_balance_per_cell(const DeviceProfile& d, DType dtype);

/// Eq. 5.13 with D_sm = D_gm: the least depth that moves the bottleneck from global to shared
/// memory, t >= a_gm / a_sm x B_sm / B_gm. A100, 2d5pt (a_gm 2, a_sm 4): 6.27.
[[nodiscard]] double desired_depth_sm(double a_gm, double a_sm, const DeviceProfile& d);

/// Eq. 5.24: the least depth that moves the bottleneck from global memory to compute,
/// t >= a_gm / a_cmp x THR / B_gm x S_cell. A100, 2d5pt double (a_gm 2, a_cmp 10): 9.98.
[[nodiscard]] double desired_depth_balance(double a_gm, double a_cmp, const DeviceProfile& d,
                                           DType dtype);

/// Eq. 5.14: cells of global traffic per plane of one device tile, halos of every fused level
/// included: tile_x tile_y + (tile_x + tile_y) x 2 t rad.
[[nodiscard]] double devtile_gm_cells(int tile_x, int tile_y, int t, int radius);

/// Eq. 5.18 (with rad generalised as in 5.14; at rad = 1 exactly as printed): the least depth at
/// which a tile_x x tile_y device tile is shared-memory bound,
/// t >= B_sm a_gm tx ty 2 / (B_gm a_sm tx ty - B_sm a_gm 2 rad (tx + ty)).
/// +infinity when condition 5.17 fails (no depth suffices). A100, 3d7pt, 32 x 32: 36.7.
[[nodiscard]] double devtile_min_depth(double a_gm, double a_sm, int tile_x, int tile_y,
                                       int radius, const DeviceProfile& d);

/// Eq. 5.31: eq. 5.19 with shared memory replaced by compute (square tile):
/// t >= THR a_gm tx 2 / (B_gm a_cmp tx / S_cell - THR a_gm 4); +infinity when not positive.
[[nodiscard]] double devtile_min_depth_balance(double a_gm, double a_cmp, int tile_x,
                                               const DeviceProfile& d, DType dtype);

/// Eq. 5.23: the least square device-tile side at which halo traffic stops being the bottleneck,
/// tile > 4 a_gm B_sm / (a_sm B_gm) x rad. A100, 3d7pt (a_gm 2, a_sm 4.5): 22.3.
[[nodiscard]] double devtile_min_tile(double a_gm, double a_sm, int radius, const DeviceProfile& d);

/// Eq. 5.30: eq. 5.23 against compute, tile > 4 a_gm THR / (a_cmp B_gm) x S_cell x rad.
/// A100, 3d7pt double (a_gm 2, a_cmp 14): 28.5.
[[nodiscard]] double devtile_min_tile_balance(double a_gm, double a_cmp, int radius,
                                              const DeviceProfile& d, DType dtype);

/// Eq. 5.26: on-chip bytes of 2D EBISU without lazy streaming,
/// (tile_y + (2 rad + tile_y) + rad t) x tile_x x S_cell.
[[nodiscard]] double footprint_2d(int tile_x, int tile_y, int radius, int t, int cell_bytes);

/// Eq. 5.27: on-chip bytes of 2D EBISU with lazy streaming, (tile_y + (tile_y + rad) t) x tile_x
/// x S_cell.
[[nodiscard]] double footprint_2d_lazy(int tile_x, int tile_y, int radius, int t, int cell_bytes);

/// Eq. 5.32: on-chip bytes of 3D device tiling without lazy streaming,
/// (tile_x + 2 rad)^2 x ((1 + rad) t + 1) x S_cell (square tile).
[[nodiscard]] double footprint_3d(int tile_x, int radius, int t, int cell_bytes);

/// Eq. 5.33: on-chip bytes of 3D device tiling with lazy streaming,
/// (tile_x + 2 rad)^2 x (1 + 2 rad) t x S_cell.
[[nodiscard]] double footprint_3d_lazy(int tile_x, int radius, int t, int cell_bytes);

}  // namespace tbtune
