#pragma once
/// @file tune.hpp
/// The tuning engine: select candidates with the model, compile them, run the naive reference,
/// verify and time every candidate on the GPU, and store every trial and the winner.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "db/cache.hpp"
#include "model/device_profile.hpp"
#include "tuner/gpu.hpp"
#include "tuner/runner.hpp"
#include "tuner/search.hpp"
#include "tuner/trial.hpp"

namespace tbtune {

struct TuneOptions {
  int device = 0;
  int top = 8;                     ///< candidates timed besides the naive reference
  std::string only_strategy;       ///< tune one strategy only (empty: all)
  std::uint64_t seed = 20231;
  std::string compile_cache_dir;   ///< folder of compiled CUBINs (empty: none)
  TimingOptions timing;
  std::string spec_text;           ///< stored with the stencil in the cache
  bool probe = true;               ///< no stored profile for this GPU: probe it (and store it)
};

/// Progress events, for the CLI to show; the library never prints.
struct TuneEvent {
  enum class Kind { Start, Compiled, Measured } kind = Kind::Start;
  int index = 0;          ///< candidate number, 0-based
  int total = 0;
  const Trial* trial = nullptr;   ///< for Measured
};
using ProgressFn = std::function<void(const TuneEvent&)>;

struct TuneResult {
  DeviceInfo device;
  DeviceProfile profile;
  WinnerKey key;
  std::vector<Trial> trials;       ///< in the order they were run; the first is naive
  std::optional<Winner> winner;    ///< the fastest verified trial
};

/// The model profile for a present GPU: the built-in profile of its architecture with the
/// device's own SM count, shared-memory and register capacities.
[[nodiscard]] DeviceProfile profile_for(const DeviceInfo& device);

/// The device record the cache keys results with.
[[nodiscard]] DeviceRecord device_record(const DeviceInfo& device);

/// Tunes `problem` on the GPU, storing trials and the winner in `cache`.
/// Throws NoGpuError without a GPU; failures of single candidates become trials.
[[nodiscard]] TuneResult tune(const Problem& problem, const TuneOptions& options, Cache& cache,
                              const ProgressFn& progress = {});

}  // namespace tbtune
