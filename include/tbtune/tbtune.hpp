#pragma once
/// @file tbtune.hpp
/// The application-facing C++ API: at start-up, fetch the kernel `tbtune tune` stored for a
/// stencil on the current GPU and run the time loop with it. A hit compiles nothing and never
/// loads NVRTC; a miss says why, and a miss policy may serve a fallback kernel instead.
///
/// @code
///   tbtune::LookupOptions o;
///   o.policy = tbtune::MissPolicy::Nearest;                  // or $TBTUNE_MISS_POLICY
///   tbtune::Lookup l = tbtune::lookup("heat.yaml", o);       // spec's domain, dtype, steps
///   if (!l.kernel) { std::fprintf(stderr, "%s\n", l.message.c_str()); return 1; }
///   void* result = l.kernel->run(d_a, d_b, 1000, stream);     // d_a holds the initial field
/// @endcode
///
/// Errors (a bad spec, an unreadable cache, a CUDA failure, bad arguments) throw
/// tbtune::ApiError; a miss and "no GPU here" are not errors but a Lookup without a kernel.
/// This header includes only the standard library.
#include <array>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace tbtune {

/// What went wrong; the same values as the C API's tbtune_status (tbtune.h).
enum class ErrorCode {
  BadSpec = 1,      ///< the spec does not parse or validate (message: file:line:col)
  BadArgument = 2,  ///< a null pointer, a wrong dtype, a domain of the wrong rank or size
  Cache = 3,        ///< the cache file cannot be read (corrupt, newer schema, not SQLite)
  Cuda = 4,         ///< a CUDA call failed (the message names it)
  Compile = 5,      ///< a fallback kernel failed to compile, or NVRTC cannot be loaded
  NoKernel = 6,     ///< run() on a lookup that has no kernel
  Internal = 7,     ///< anything else
};

/// The one exception type of the public API. `what()` is one line that says what failed.
class ApiError : public std::runtime_error {
 public:
  ApiError(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  [[nodiscard]] ErrorCode code() const { return code_; }

 private:
  ErrorCode code_;
};

/// The precision of a field (DType inside the library; another name here, so both can meet).
enum class Precision { Float, Double };

/// A parsed and validated stencil spec (README "Stencil spec"), with its canonical hash.
class StencilSpec {
 public:
  /// Reads the YAML spec at `path`; throws ApiError(BadSpec) with file:line:col.
  [[nodiscard]] static StencilSpec from_file(const std::string& path);
  /// Parses spec text held in memory (`name` is used in error messages only).
  [[nodiscard]] static StencilSpec from_text(std::string_view text, const std::string& name = "<string>");

  [[nodiscard]] const std::string& name() const;
  /// 16 hex digits of the canonical form's FNV-1a hash: what the cache keys stencils by.
  [[nodiscard]] const std::string& hash() const;
  [[nodiscard]] int dims() const;
  [[nodiscard]] int radius() const;
  [[nodiscard]] Precision dtype() const;             ///< the spec's
  [[nodiscard]] std::array<long, 3> domain() const;  ///< the spec's nx, ny, nz (nz = 1 in 2D)
  [[nodiscard]] long steps() const;                  ///< the spec's

  StencilSpec(const StencilSpec&);
  StencilSpec& operator=(const StencilSpec&);
  StencilSpec(StencilSpec&&) noexcept;
  StencilSpec& operator=(StencilSpec&&) noexcept;
  ~StencilSpec();

  struct Impl;
  /// Internal: the library's parsed form.
  [[nodiscard]] const Impl& impl() const { return *impl_; }

 private:
  explicit StencilSpec(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// Why a lookup did not find the exact kernel it asked for. Checked in this order, so the
/// reason is the first difference: a cache that has the stencil on another GPU says
/// OtherDevice even if the domain differs too.
enum class MissReason {
  None,            ///< a hit
  NoCache,         ///< no cache file (nothing was ever tuned here)
  StencilUnknown,  ///< the cache holds no winner for this stencil
  NoGpu,           ///< no usable GPU (no driver, no device): nothing can run
  OtherDevice,     ///< tuned only on other GPU models
  OtherDriver,     ///< tuned on this GPU model, but only under another driver version
  OtherDtype,      ///< tuned on this GPU, but only in the other precision
  OtherDomain,     ///< tuned on this GPU, but only for other domain sizes
  OtherStepClass,  ///< tuned for this domain, but only for step counts of another class
  StaleKernel,     ///< a winner is stored for this key, but an earlier tbtune built its kernel, and
                   ///< this one would launch it wrongly: tune again (the policy serves meanwhile)
};
/// "no_cache", "stencil_unknown", ... ("hit" for None).
[[nodiscard]] const char* reason_name(MissReason reason);

/// What to do on a miss.
enum class MissPolicy {
  Fail,     ///< no kernel: the Lookup says why (the default)
  Naive,    ///< compile the naive kernel (one launch per step): always correct, slowest
  Nearest,  ///< the parameters of the nearest stored winner (same stencil and precision, this GPU
            ///< model; the closest domain and step class, preferring this driver), compiled
            ///< and stored, so the next start is a hit; else as Model
  Model,    ///< the performance model's best candidate, compiled and stored; else naive
};
/// "fail", "naive", "nearest", "model".
[[nodiscard]] const char* policy_name(MissPolicy policy);
/// Parses a policy name; throws ApiError(BadArgument) for anything else.
[[nodiscard]] MissPolicy parse_policy(std::string_view name);

/// Where a lookup's kernel came from.
enum class KernelSource { None, Cache, Nearest, Model, Naive };

/// One fallback, as reported to LookupOptions::on_fallback (and, when $TBTUNE_LOG_FALLBACK is
/// set to anything but "0", printed to stderr as one line).
struct FallbackEvent {
  MissReason reason = MissReason::None;
  MissPolicy policy = MissPolicy::Fail;
  KernelSource served_by = KernelSource::None;
  std::string asked;    ///< "j2d5pt double 4096x4096x1 steps class 9 on <device>"
  std::string used;     ///< the kernel served and what it came from, or "nothing"
  std::string message;  ///< the whole story in one line
  bool stored = false;  ///< stored in the cache, so the next start is a hit
};

struct LookupOptions {
  std::string db;                             ///< cache file; empty: $TBTUNE_DB or the default path
  std::optional<std::array<long, 3>> domain;  ///< nx, ny, nz (nz = 1 in 2D); default: the spec's
  std::optional<Precision> dtype;             ///< default: the spec's
  std::optional<long> steps;                  ///< selects the step class; default: the spec's
  /// Default: $TBTUNE_MISS_POLICY if set, else Fail.
  std::optional<MissPolicy> policy;
  /// Called once for every fallback (and for a miss under Fail), before lookup() returns.
  std::function<void(const FallbackEvent&)> on_fallback;
  /// Where fallback kernels' CUBINs are kept between runs; empty: "cubins/" beside the cache.
  std::string compile_cache_dir;
};

/// A kernel loaded on the current device, ready to advance the problem it was looked up for.
class TunedKernel {
 public:
  /// Advances `steps` time steps on `stream` (a cudaStream_t; nullptr: the default stream).
  /// `a` and `b` are device arrays of nx * ny * nz elements of dtype(), x fastest; `a` holds
  /// the current field and both hold the boundary ring. Returns `a` or `b`, whichever holds
  /// the result. Asynchronous. Throws ApiError(BadArgument) for null or equal arrays, steps < 0,
  /// or an array that the driver knows as a device allocation with less room from `a` (or `b`)
  /// on than domain() needs, rather than let the kernel write past it (asked of the driver once
  /// per pair of arrays: an array freed and allocated again smaller at the same address is not
  /// seen).
  void* run(void* a, void* b, long steps, void* stream = nullptr);

  [[nodiscard]] const std::string& strategy() const;
  [[nodiscard]] const std::map<std::string, int>& params() const;
  /// GCells/s measured when it was tuned; 0 for a fallback nobody has timed.
  [[nodiscard]] double tuned_gcells() const;
  /// The domain and precision this kernel was built and launched for (run() assumes them).
  [[nodiscard]] std::array<long, 3> domain() const;
  [[nodiscard]] Precision dtype() const;
  [[nodiscard]] KernelSource source() const;

  TunedKernel(TunedKernel&&) noexcept;
  TunedKernel& operator=(TunedKernel&&) noexcept;
  ~TunedKernel();

  struct Impl;
  /// Internal: made by lookup().
  explicit TunedKernel(std::unique_ptr<Impl> impl);
  /// Internal: the library's view.
  [[nodiscard]] const Impl& impl() const { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

/// The outcome of a lookup: a kernel (a hit, or a fallback the policy chose), or none and why.
struct Lookup {
  std::optional<TunedKernel> kernel;
  MissReason reason = MissReason::None;     ///< None on a hit
  KernelSource source = KernelSource::None;
  std::string message;                      ///< one line: what was found, or why not
  [[nodiscard]] bool hit() const { return reason == MissReason::None; }
};

/// Looks up the stored winner for `spec` (with `options`' overrides) on the current CUDA device
/// (never changed; set it before calling). Never throws for a miss or for a machine without a
/// GPU; throws ApiError for bad input, an unreadable cache or a failing fallback compile.
[[nodiscard]] Lookup lookup(const StencilSpec& spec, const LookupOptions& options = {});
/// The same, from the spec file at `spec_path`.
[[nodiscard]] Lookup lookup(const std::string& spec_path, const LookupOptions& options = {});
/// The same, from spec text in memory.
[[nodiscard]] Lookup lookup_text(std::string_view spec_text, const LookupOptions& options = {});

/// The naive kernel (one launch per step) for `spec` with `options`' overrides, compiled with
/// NVRTC on the current device: the reference an application can check a tuned kernel against.
/// Throws ApiError(Cuda) without a GPU.
[[nodiscard]] TunedKernel naive_kernel(const StencilSpec& spec, const LookupOptions& options = {});

}  // namespace tbtune
