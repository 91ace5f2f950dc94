// Thesis eqs. 5.8-5.33 as written (see derived.hpp); only clamps and the "no solution" cases are
// ours, so a strategy never sees a negative share or a negative depth.
#include "model/derived.hpp"

#include <algorithm>
#include <limits>

namespace tbtune {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

double flop_rate(const DeviceProfile& d, DType dtype) {
  return dtype == DType::Double ? d.fp64_flops : d.fp32_flops;
}

// One side's valid share: 1 - 2 t rad / tile, never below zero.
double side_share(int tile, int t, int radius) {
  if (tile <= 0) return 0.0;
  return std::max(0.0, double(tile - 2 * t * radius) / tile);
}

}  // namespace

double overlapped_valid_2d(int tile_x, int t, int radius) {
  return std::min(1.0, side_share(tile_x, t, radius));
}

double overlapped_valid_3d(int tile_x, int tile_y, int t, int radius) {
  return std::min(1.0, side_share(tile_x, t, radius) * side_share(tile_y, t, radius));
}

double devtile_valid(double work_s, double sync_s, double syncs) {
  const double total = work_s + sync_s * std::max(0.0, syncs);
  return total > 0 ? work_s / total : 1.0;
}

double machine_balance(const DeviceProfile& d, DType dtype) { return flop_rate(d, dtype) / d.gm_bw; }

double machine_balance_per_cell(const DeviceProfile& d, DType dtype) {
  return machine_balance(d, dtype) * dtype_bytes(dtype);
}

double desired_depth_sm(double a_gm, double a_sm, const DeviceProfile& d) {
  return a_gm / a_sm * d.sm_bw / d.gm_bw;
}

double desired_depth_balance(double a_gm, double a_cmp, const DeviceProfile& d, DType dtype) {
  return a_gm / a_cmp * machine_balance_per_cell(d, dtype);
}

double devtile_gm_cells(int tile_x, int tile_y, int t, int radius) {
  return double(tile_x) * tile_y + double(tile_x + tile_y) * 2.0 * t * radius;
}

double devtile_min_depth(double a_gm, double a_sm, int tile_x, int tile_y, int radius,
                         const DeviceProfile& d) {
  const double area = double(tile_x) * tile_y;
  // Eq. 5.17 must hold, else the halo traffic alone outweighs the tile's shared-memory work.
  const double denom = d.gm_bw * a_sm * area - d.sm_bw * a_gm * 2.0 * radius * (tile_x + tile_y);
  if (denom <= 0) return kInf;
  return d.sm_bw * a_gm * area * 2.0 / denom;
}

double devtile_min_depth_balance(double a_gm, double a_cmp, int tile_x, const DeviceProfile& d,
                                 DType dtype) {
  const double thr = flop_rate(d, dtype);
  const double S = dtype_bytes(dtype);
  const double denom = d.gm_bw * a_cmp * tile_x / S - thr * a_gm * 4.0;
  if (denom <= 0) return kInf;
  return thr * a_gm * tile_x * 2.0 / denom;
}

double devtile_min_tile(double a_gm, double a_sm, int radius, const DeviceProfile& d) {
  return 4.0 * a_gm * d.sm_bw / (a_sm * d.gm_bw) * radius;
}

double devtile_min_tile_balance(double a_gm, double a_cmp, int radius, const DeviceProfile& d,
                                DType dtype) {
  return 4.0 * a_gm / a_cmp * machine_balance_per_cell(d, dtype) * radius;
}

double footprint_2d(int tile_x, int tile_y, int radius, int t, int cell_bytes) {
  return double(tile_y + (2 * radius + tile_y) + radius * t) * tile_x * cell_bytes;
}

double footprint_2d_lazy(int tile_x, int tile_y, int radius, int t, int cell_bytes) {
  return double(tile_y + (tile_y + radius) * t) * tile_x * cell_bytes;
}

double footprint_3d(int tile_x, int radius, int t, int cell_bytes) {
  const double side = tile_x + 2.0 * radius;
  return side * side * ((1.0 + radius) * t + 1.0) * cell_bytes;
}

double footprint_3d_lazy(int tile_x, int radius, int t, int cell_bytes) {
  const double side = tile_x + 2.0 * radius;
  return side * side * ((1.0 + 2.0 * radius) * t) * cell_bytes;
}

}  // namespace tbtune
