// TunedKernel: a stored (or fallback) CUBIN loaded on the current device, run on the caller's stream.
#include <filesystem>
#include <optional>

#include <fmt/format.h>

#include "tuner/api/fallback.hpp"
#include "tuner/api/internal.hpp"
#include "tuner/spec/error.hpp"

namespace tbtune {

TunedKernel::TunedKernel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TunedKernel::TunedKernel(TunedKernel&&) noexcept = default;
TunedKernel& TunedKernel::operator=(TunedKernel&&) noexcept = default;
TunedKernel::~TunedKernel() = default;

TunedKernel make_kernel(const Problem& problem, Winner winner, KernelSource source, const DeviceInfo& device) {
  const Strategy* strategy = find_strategy(winner.trial.strategy);
  if (!strategy) throw Error("cached winner uses unknown strategy '" + winner.trial.strategy + "'");
  auto impl = std::make_unique<TunedKernel::Impl>();
  impl->problem = problem;
  impl->kernels = std::make_unique<KernelSet>(*strategy, winner.trial.params, problem,
                                              winner.trial.cubin, device);
  impl->winner = std::move(winner);
  impl->source = source;
  return TunedKernel(std::move(impl));
}

namespace {

/// Throws ApiError(BadArgument) when the driver knows `array` as a device allocation with less
/// room after it than the kernel's domain needs: the kernel would write past it. Arrays the
/// driver does not know (host memory some systems let kernels read) are not checked.
// Throws when the driver knows `array` to be too small; returns whether it knew its size.
bool check_room(const char* name, const void* array, const Problem& p) {
  const std::size_t need = std::size_t(p.domain[0] * p.domain[1] * p.domain[2]) * std::size_t(dtype_bytes(p.dtype));
  const std::optional<std::size_t> room = device_bytes_after(array);
  if (room && *room < need)
    throw ApiError(ErrorCode::BadArgument,
                   fmt::format("run: array {} has room for {} bytes, but the kernel was built for {}x{}x{} {} "
                               "({} bytes): look up the domain the arrays have",
                               name, *room, p.domain[0], p.domain[1], p.domain[2], dtype_name(p.dtype), need));
  return room.has_value();
}

}  // namespace

void* TunedKernel::run(void* a, void* b, long steps, void* stream) {
  if (!a || !b) throw ApiError(ErrorCode::BadArgument, "run: the field arrays must not be null");
  if (a == b) throw ApiError(ErrorCode::BadArgument, "run: the two field arrays must differ");
  if (steps < 0) throw ApiError(ErrorCode::BadArgument, "run: steps must not be negative");
  try {
    auto& checked = impl_->checked;
    const auto known = [&](const void* p) { return p == checked[0].load() || p == checked[1].load(); };
    // Asked once per pair of addresses whose size the driver confirmed (an array freed and
    // allocated again smaller at the same address is not seen).
    if (!known(a) || !known(b)) {
      const bool sized_a = check_room("a", a, impl_->problem);
      const bool sized_b = check_room("b", b, impl_->problem);
      if (sized_a && sized_b) {
        checked[0].store(a);
        checked[1].store(b);
      }
    }
    return impl_->kernels->run(a, b, steps, stream);
  } catch (...) {
    rethrow_as_api_error();
  }
}

const std::string& TunedKernel::strategy() const { return impl_->winner.trial.strategy; }
const std::map<std::string, int>& TunedKernel::params() const { return impl_->winner.trial.params; }
double TunedKernel::tuned_gcells() const { return impl_->winner.trial.gcells_median; }
std::array<long, 3> TunedKernel::domain() const { return impl_->problem.domain; }
Precision TunedKernel::dtype() const { return to_precision(impl_->problem.dtype); }
KernelSource TunedKernel::source() const { return impl_->source; }

TunedKernel naive_kernel(const StencilSpec& spec, const LookupOptions& options) {
  try {
    const Problem problem = problem_for(spec.impl(), options);
    const DeviceInfo device = current_device();
    const FallbackContext ctx{problem, device, options.compile_cache_dir, spec.impl().spec.text};
    return serve_naive(ctx).kernel;
  } catch (...) {
    rethrow_as_api_error();
  }
}

}  // namespace tbtune
