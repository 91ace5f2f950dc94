#pragma once
/// @file internal.hpp
/// Internal to tuner/api: what the public types hold, and the translation of the library's
/// errors (tbtune::Error and its subclasses) into the public ApiError at the API's edge.
#include <array>
#include <atomic>
#include <memory>
#include <string>

#include "db/cache.hpp"
#include "tbtune/tbtune.hpp"
#include "tuner/gpu/kernel_set.hpp"
#include "tuner/spec/spec.hpp"
#include "tuner/spec/stencil.hpp"

namespace tbtune {

struct StencilSpec::Impl {
  Spec spec;
  Stencil stencil;
};

struct TunedKernel::Impl {
  Problem problem;
  Winner winner;                       ///< the trial it came from (CUBIN, params, GCells/s)
  std::unique_ptr<KernelSet> kernels;  ///< loaded on the device that was current at lookup
  KernelSource source = KernelSource::None;
  /// Arrays a run() found large enough, so a time loop that passes the same two (in either
  /// order) asks the driver about them once. Atomic: threads may run one kernel on their own
  /// streams; each stores only arrays it has checked, so a mixed pair is still a checked one.
  std::array<std::atomic<const void*>, 2> checked{nullptr, nullptr};
};

/// Call inside `catch (...)`: rethrows the exception in flight as an ApiError whose code says
/// what kind of failure it was (a SpecError is BadSpec, a CacheError Cache, ...), message kept.
[[noreturn]] void rethrow_as_api_error();

/// The problem a lookup is for: the spec's stencil with `options`' dtype, domain and steps.
/// Throws ApiError(BadArgument) for a domain of the wrong rank, too small for the stencil's
/// radius, or steps < 1.
[[nodiscard]] Problem problem_for(const StencilSpec::Impl& spec, const LookupOptions& options);

[[nodiscard]] DType to_dtype(Precision p);
[[nodiscard]] Precision to_precision(DType t);

/// Loads `winner`'s CUBIN on the current device, ready to run `problem`. Throws the library's
/// errors (CudaError, Error when the launch cannot be built).
[[nodiscard]] TunedKernel make_kernel(const Problem& problem, Winner winner, KernelSource source,
                                      const DeviceInfo& device);

}  // namespace tbtune
