#pragma once
/// @file fallback.hpp
/// Internal to tuner/api: what a miss policy serves. Each builds a kernel with NVRTC (opened
/// only now) for the exact problem asked; `nearest` and `model` then store it in the cache
/// under the key that missed, so the next start with the same key is a hit.
#include <string>

#include "db/cache.hpp"
#include "tbtune/tbtune.hpp"
#include "tuner/codegen/strategy.hpp"
#include "tuner/gpu/gpu.hpp"

namespace tbtune {

/// A compiled kernel ready to serve, with what a FallbackEvent says about it.
struct Served {
  TunedKernel kernel;
  KernelSource source;
  std::string used;  ///< "cmq2d t=4,tile_x=128 (from ...)"
};

/// What every fallback needs to know.
struct FallbackContext {
  const Problem& problem;
  const DeviceInfo& device;    ///< the current device (its driver possibly faked by the test hook)
  std::string compile_cache;   ///< folder of compiled CUBINs (empty: none)
  std::string spec_text;       ///< stored with the stencil when the cache does not know it
};

/// Compiles `strategy` with `params` for the context's problem and loads it. The winner it
/// carries is keyed for this device and problem and has no timing (gcells 0). Throws the
/// library's errors (CompileError, CudaError, Error for a launch that cannot be built).
[[nodiscard]] TunedKernel build_kernel(const FallbackContext& ctx, const Strategy& strategy,
                                       const Params& params, KernelSource source);

/// The naive kernel (one launch per step).
[[nodiscard]] Served serve_naive(const FallbackContext& ctx);
/// The parameters of `near` (a stored winner for this stencil and GPU model), rebuilt for the
/// problem asked. Throws when they cannot be built for it.
[[nodiscard]] Served serve_nearest(const FallbackContext& ctx, const Winner& near);
/// The model's best feasible candidates, trying up to three until one builds; `profile_from`
/// is a cache that may hold this GPU's probed profile (nullptr: the built-in one). Throws when
/// none builds.
[[nodiscard]] Served serve_model(const FallbackContext& ctx, const Cache* profile_from);

/// Stores `kernel`'s winner in the cache at `path` (creating nothing: the file must exist for
/// nearest, and model creates it as `tbtune tune` would). Returns an empty string when stored,
/// else why not (a read-only cache is not an error: the kernel is served all the same).
[[nodiscard]] std::string store(const std::string& path, const FallbackContext& ctx, const TunedKernel& kernel);

}  // namespace tbtune
