#pragma once
/// @file tbtune.hpp
/// The application-facing API: at start-up, fetch the kernel `tbtune tune` stored for a stencil
/// on this GPU and run the time loop with it. A lookup never compiles anything.
///
/// @code
///   auto k = tbtune::TunedKernel::lookup("heat.yaml");        // spec's domain, dtype, steps
///   if (!k) { /* miss: run `tbtune tune heat.yaml` first, or use your own kernel */ }
///   void* result = k->run(d_a, d_b, 1000);                   // d_a holds the initial field
/// @endcode
#include <array>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace tbtune {

struct LookupOptions {
  std::string db;                              ///< cache file; empty: the default path
  int device = 0;                              ///< CUDA device number
  std::optional<std::array<long, 3>> domain;   ///< nx, ny, nz (nz = 1 in 2D); default: the spec's
  std::optional<std::string> dtype;            ///< "float" or "double"; default: the spec's
  std::optional<long> steps;                   ///< selects the step class; default: the spec's
};

/// A tuned kernel loaded from the cache, ready to launch on the current device.
class TunedKernel {
 public:
  /// The cached winner for the spec at `spec_path`, or std::nullopt on a miss.
  /// Throws tbtune::Error (see tuner/error.hpp) for a bad spec, an unreadable cache or CUDA errors.
  [[nodiscard]] static std::optional<TunedKernel> lookup(const std::string& spec_path,
                                                         const LookupOptions& options = {});

  /// Advances `steps` time steps. `a` and `b` are device arrays of nx * ny * nz elements, x
  /// fastest; `a` holds the current field and both hold the boundary ring. Returns `a` or `b`,
  /// whichever holds the result. Asynchronous on the default stream.
  void* run(void* a, void* b, long steps);

  [[nodiscard]] const std::string& strategy() const;
  [[nodiscard]] const std::map<std::string, int>& params() const;
  /// GCells/s measured when it was tuned.
  [[nodiscard]] double tuned_gcells() const;

  TunedKernel(TunedKernel&&) noexcept;
  TunedKernel& operator=(TunedKernel&&) noexcept;
  ~TunedKernel();

 private:
  struct Impl;
  explicit TunedKernel(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tbtune
