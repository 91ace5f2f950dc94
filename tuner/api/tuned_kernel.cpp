// The application-facing lookup (include/tbtune/tbtune.hpp): cache hit -> loaded kernels.
#include "tbtune/tbtune.hpp"

#include <filesystem>

#include "db/cache.hpp"
#include "tuner/gpu/kernel_set.hpp"
#include "tuner/search/tune.hpp"
#include "tuner/spec/error.hpp"

namespace tbtune {

struct TunedKernel::Impl {
  Winner winner;
  std::unique_ptr<KernelSet> kernels;
};

TunedKernel::TunedKernel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TunedKernel::TunedKernel(TunedKernel&&) noexcept = default;
TunedKernel& TunedKernel::operator=(TunedKernel&&) noexcept = default;
TunedKernel::~TunedKernel() = default;

std::optional<TunedKernel> TunedKernel::lookup(const std::string& spec_path, const LookupOptions& o) {
  Spec spec = load_spec(spec_path);
  if (o.dtype) {
    if (*o.dtype != "float" && *o.dtype != "double")
      throw UsageError("dtype '" + *o.dtype + "': expected float or double");
    spec.dtype = *o.dtype == "float" ? DType::Float : DType::Double;
  }
  if (o.steps) spec.steps = *o.steps;
  Problem problem = make_problem(spec);
  if (o.domain) problem.domain = *o.domain;
  const DeviceInfo device = open_device(o.device);
  const WinnerKey key{problem.stencil.hash, device_record(device).fingerprint(), problem.dtype,
                      problem.domain, steps_class(problem.steps)};
  const std::string path = o.db.empty() ? Cache::default_path() : o.db;
  if (!std::filesystem::exists(path)) return std::nullopt;  // nothing tuned yet
  auto winner = Cache(path, Cache::Mode::ReadOnly).winner(key);
  if (!winner) return std::nullopt;
  const Strategy* strategy = find_strategy(winner->trial.strategy);
  if (!strategy) throw Error("cached winner uses unknown strategy '" + winner->trial.strategy + "'");
  auto impl = std::make_unique<Impl>();
  impl->kernels = std::make_unique<KernelSet>(*strategy, winner->trial.params, problem,
                                              winner->trial.cubin, device);
  impl->winner = std::move(*winner);
  return TunedKernel(std::move(impl));
}

void* TunedKernel::run(void* a, void* b, long steps) { return impl_->kernels->run(a, b, steps); }
const std::string& TunedKernel::strategy() const { return impl_->winner.trial.strategy; }
const std::map<std::string, int>& TunedKernel::params() const { return impl_->winner.trial.params; }
double TunedKernel::tuned_gcells() const { return impl_->winner.trial.gcells_median; }

}  // namespace tbtune
