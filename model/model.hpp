#pragma once
/// @file model.hpp
/// The practical attainable performance model (PP = P x V) of EBISU, thesis section 5.6.
/// A strategy describes one candidate as `ModelTerms`; `predict` turns them into GCells/s.
#include <string>

#include "model/device_profile.hpp"
#include "tuner/spec/stencil.hpp"

namespace tbtune {

/// What a strategy knows about one candidate, in the thesis' terms. Per-cell counts are in
/// elements (multiplied by the element size inside the model).
struct ModelTerms {
  int depth = 1;              ///< t: time steps fused per pass over the domain
  double a_gm = 2;            ///< global-memory accesses per cell per pass (eq. 5.2)
  double a_sm = 0;            ///< shared-memory accesses per cell per fused step (eq. 5.3)
  double a_cmp = 0;           ///< flops per cell per step (eq. 5.4)
  double d_gm = 1;            ///< D_gm / D_all: extra global traffic, e.g. device-tile halos (5.14)
  double d_sm = 1;            ///< D_sm / D_all
  double d_cmp = 1;           ///< D_cmp / D_all
  double valid = 1;           ///< V of overlapped SM tiling (eqs. 5.8, 5.9); 1 if none
  double syncs_per_pass = 0;  ///< grid-wide syncs per pass (device tiling, eq. 5.11)
  long smem_bytes = 0;        ///< shared memory per block
  int threads = 256;          ///< threads per block
  int blocks_per_sm = 1;      ///< blocks resident per SM this candidate asks for
  int regs_per_thread = 0;    ///< estimate before compiling; replaced by ptxas' figure after
  double ilp = 1;             ///< independent cells per thread in flight
};

enum class Bottleneck { GlobalMemory, SharedMemory, Compute };
[[nodiscard]] const char* bottleneck_name(Bottleneck b);  ///< "gm", "sm", "cmp"

struct Prediction {
  double P_gcells = 0;   ///< attainable performance, eq. 5.7
  double V = 1;          ///< valid proportion (5.8/5.9 or 5.11): the product of the five below
  double V_valid = 1;    ///< the strategy's own share (overlapped halos, tile and wave balance)
  double V_sync = 1;     ///< time not spent in grid-wide syncs (eq. 5.11)
  double V_latency = 1;  ///< the latency factor: updates in flight vs the rate asked for
  double V_issue = 1;    ///< the issue factor: ready warps per scheduler vs the FP pipe's share
  double V_steps = 1;    ///< the run's exact step count: full passes and remainder steps (search.cpp)
  double PP_gcells = 0;  ///< P x V, eq. 5.1
  Bottleneck bottleneck = Bottleneck::GlobalMemory;
  bool fits = true;      ///< shared memory, registers and threads fit on one SM
  std::string why_not;   ///< when !fits, what does not fit
};

/// Evaluates the model for one candidate of `problem` on `device`.
[[nodiscard]] Prediction predict(const ModelTerms& terms, const Problem& problem,
                                 const DeviceProfile& device);

/// Shared memory the driver keeps per resident block on top of what the kernel asks for.
[[nodiscard]] long reserved_smem_per_block(const DeviceProfile& device);

/// Whether `terms`' resources fit one SM of `device`, checked in this order: shared memory per
/// block, shared memory per SM (with the 1 KiB the driver reserves per block on cc >= 8.0),
/// blocks per SM, threads per SM, registers per SM (when regs_per_thread > 0, allocated per warp
/// in units of 8 registers per thread). Empty when it fits, else the first failing resource with
/// the numbers, e.g. "shared memory per SM: 2 blocks x (120000 + 1024) B = 242048 B > 233472 B".
/// `predict` fills Prediction::fits and why_not from this.
[[nodiscard]] std::string resource_check(const ModelTerms& terms, const DeviceProfile& device);

/// Little's law (thesis eqs. 2.6, 4.9): the global-memory bytes that must be in flight,
/// device-wide, to sustain `device.gm_bw`: C = THR x L = gm_bw x gm_latency_s. Loads and stores
/// both count, as gm_bw counts both.
[[nodiscard]] double min_bytes_in_flight(const DeviceProfile& device);

/// min_bytes_in_flight() / sm_count: what each SM must keep in flight.
[[nodiscard]] double min_bytes_in_flight_per_sm(const DeviceProfile& device);

/// The minimum necessary parallelism per SM (thesis 2.4, eq. 2.9: PAR >= C), in independent
/// `dtype` accesses in flight per SM, i.e. the least TLP x ILP (eq. 2.8) that saturates global
/// memory. E.g. A100 double: 1.555e12 x 600e-9 / 108 / 8 = 1080, close to the thesis' 256 x 4.
[[nodiscard]] double min_parallelism_per_sm(const DeviceProfile& device, DType dtype);

/// The parallelism a candidate provides per SM: threads x blocks_per_sm x ilp (eqs. 2.7, 2.8).
[[nodiscard]] double parallelism_per_sm(const ModelTerms& terms);

}  // namespace tbtune
