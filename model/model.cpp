// The practical attainable performance model, thesis eqs. 5.1-5.11. docs/model.md explains the
// terms a strategy supplies and how we read the equations.
#include "model/model.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace tbtune {
namespace {


// Registers are allocated per warp, per thread in units of 8 (256 per warp), on cc 7.x-9.x.
constexpr int kMaxRegsPerThread = 255;

long allocated_regs(int regs_per_thread, int threads) {
  const long per_thread = (long(regs_per_thread) + 7) / 8 * 8;
  const long warps = (long(threads) + 31) / 32;
  return per_thread * 32 * warps;
}

}  // namespace

// On cc >= 8.0 the driver keeps 1 KiB of shared memory per resident block for itself
// (cudaDevAttrReservedSharedMemoryPerBlock); the per-SM figure includes it, the opt-in per-block
// figure does not. Two 114 KiB blocks therefore do not fit a 228 KiB H100 SM.
long reserved_smem_per_block(const DeviceProfile& d) { return d.cc_major >= 8 ? 1024 : 0; }

const char* bottleneck_name(Bottleneck b) {
  switch (b) {
    case Bottleneck::GlobalMemory: return "gm";
    case Bottleneck::SharedMemory: return "sm";
    case Bottleneck::Compute: return "cmp";
  }
  return "?";
}

std::string resource_check(const ModelTerms& m, const DeviceProfile& d) {
  const long bps = m.blocks_per_sm;
  if (m.smem_bytes > d.smem_per_block)
    return fmt::format("shared memory per block: {} B > {} B opt-in limit", m.smem_bytes,
                       d.smem_per_block);
  const long per_block = m.smem_bytes > 0 ? m.smem_bytes + reserved_smem_per_block(d) : 0;
  if (per_block * bps > d.smem_per_sm)
    return fmt::format("shared memory per SM: {} blocks x ({} + {}) B = {} B > {} B", bps,
                       m.smem_bytes, reserved_smem_per_block(d), per_block * bps, d.smem_per_sm);
  if (bps > d.max_blocks_per_sm)
    return fmt::format("blocks per SM: {} > {}", bps, d.max_blocks_per_sm);
  if (long(m.threads) * bps > d.max_threads_per_sm)
    return fmt::format("threads per SM: {} blocks x {} = {} > {}", bps, m.threads,
                       long(m.threads) * bps, d.max_threads_per_sm);
  // The ISA addresses at most 255 registers per thread; more spills to local memory.
  if (m.regs_per_thread > kMaxRegsPerThread)
    return fmt::format("registers per thread: {} > {}", m.regs_per_thread, kMaxRegsPerThread);
  if (m.regs_per_thread > 0) {
    const long regs = allocated_regs(m.regs_per_thread, m.threads) * bps;
    if (regs > d.regs_per_sm)
      return fmt::format("registers per SM: {} blocks x {} threads x {} regs = {} allocated > {}",
                         bps, m.threads, m.regs_per_thread, regs, d.regs_per_sm);
  }
  return {};
}

Prediction predict(const ModelTerms& m, const Problem& problem, const DeviceProfile& d) {
  Prediction out;
  const double S = dtype_bytes(problem.dtype);                 // S_cell, bytes
  const double D = problem.interior_cells();                   // D_all
  const double t = m.depth;
  const double thr = problem.dtype == DType::Double ? d.fp64_flops : d.fp32_flops;

  // Eqs. 5.2-5.4 for one pass: D_all cells advanced t steps. d_gm etc. scale D_all to the D_gm,
  // D_sm, D_cmp of the thesis (e.g. device-tile halos re-read through global memory, 5.14).
  const double T_gm = m.a_gm * m.d_gm * D * S / d.gm_bw;
  const double T_sm = d.sm_bw > 0 ? m.a_sm * m.d_sm * D * t * S / d.sm_bw : 0.0;
  const double T_cmp = thr > 0 ? m.a_cmp * m.d_cmp * D * t / thr : 0.0;

  // Eqs. 5.5/5.6; on a tie the earlier (gm, then sm) is named, as the thesis' goal is to move the
  // bottleneck off global memory and a tie means it has not yet moved.
  double T = T_gm;
  out.bottleneck = Bottleneck::GlobalMemory;
  if (T_sm > T) {
    T = T_sm;
    out.bottleneck = Bottleneck::SharedMemory;
  }
  if (T_cmp > T) {
    T = T_cmp;
    out.bottleneck = Bottleneck::Compute;
  }

  // Eq. 5.7 in GCells/s.
  out.P_gcells = T > 0 ? D * t / T / 1e9 : 0.0;

  // V: the strategy's overlapped-tiling share (5.8/5.9), times the device-tiling share (5.11).
  // Eq. 5.11's T_stencil is the time of the work between the n syncs it counts: we apply it per
  // pass, with T the whole pass (D_all cells, t steps) and n = syncs_per_pass, which equals the
  // thesis' per-tile form when every tile takes the same time.
  out.V_valid = m.valid;
  if (m.syncs_per_pass > 0 && T > 0) out.V_sync = T / (T + d.grid_sync_s * m.syncs_per_pass);
  out.V = out.V_valid * out.V_sync;
  // Latency (Little's law, thesis 2.4, applied to cell updates rather than bytes): with N cell
  // updates in flight per SM, each taking L from its reads to its result, an SM advances at most
  // N / L cells per second. A cell waits for both that latency and its share of the bottleneck
  // B, so the rate is 1 / (1/B + L/N) = B x N / (N + B L): the factor below. It is what makes
  // 256 threads x 1 row per SM reach a third of the shared-memory bound and 256 x 4 rows three
  // quarters (docs/model.md, "Parallelism").
  const double in_flight = parallelism_per_sm(m);
  if (d.update_latency_s > 0 && in_flight > 0 && d.sm_count > 0) {
    const double per_sm = out.P_gcells * out.V * 1e9 / d.sm_count;  // cells/s per SM
    out.V_latency = in_flight / (in_flight + per_sm * d.update_latency_s);
    out.V *= out.V_latency;
  }
  // Issue: a scheduler issues one warp instruction per clock, and a multiply-add of every lane
  // of a warp is one instruction, so the FP pipe at the rate asked for needs a share of the
  // issue slots (on sm_90 about 1 for float, 0.5 for double at full rate, scaled by how busy
  // the pipe is). With W warps per scheduler, each ready in a share e of clocks, a scheduler
  // issues in 1 - (1 - e)^W of them. Few warps suffice for double but not for float: 8 warps of
  // 255 registers ran 0.6-0.75 of 12 warps of 168 in float, and led in double (docs/model.md,
  // "Issue"). The rate asked for is P x V so far, V_valid included: the pipe's redundant work
  // (a tile's halo) is counted as idle, which the fitted share absorbs.
  const double issue_flops = 2.0 * 32 * d.schedulers_per_sm * d.sm_count * d.clock_ghz * 1e9;
  if (d.warp_ready_share > 0 && issue_flops > 0 && thr > 0 && T > 0 && m.threads > 0) {
    const double needed = thr / issue_flops * (T_cmp / T) * out.V;
    const double warps = double(m.threads) * m.blocks_per_sm / 32 / d.schedulers_per_sm;
    const double ready = 1 - std::pow(1 - d.warp_ready_share, warps);
    if (needed > 0) out.V_issue = std::min(1.0, ready / needed);
    out.V *= out.V_issue;
  }
  out.PP_gcells = out.P_gcells * out.V;  // eq. 5.1

  out.why_not = resource_check(m, d);
  out.fits = out.why_not.empty();
  return out;
}

double min_bytes_in_flight(const DeviceProfile& d) { return d.gm_bw * d.gm_latency_s; }

double min_bytes_in_flight_per_sm(const DeviceProfile& d) {
  return d.sm_count > 0 ? min_bytes_in_flight(d) / d.sm_count : 0.0;
}

double min_parallelism_per_sm(const DeviceProfile& d, DType dtype) {
  return min_bytes_in_flight_per_sm(d) / dtype_bytes(dtype);
}

double parallelism_per_sm(const ModelTerms& m) {
  return double(m.threads) * m.blocks_per_sm * m.ilp;
}

}  // namespace tbtune
