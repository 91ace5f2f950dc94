#pragma once
/// @file strategy.hpp
/// The one interface every kernel strategy implements. The search, the engine and the cache
/// talk to strategies only through it; adding a strategy means one new file in
/// tuner/strategies/ and one line in the registry (strategy.cpp).
#include <array>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/device_profile.hpp"
#include "model/model.hpp"
#include "tuner/spec/stencil.hpp"

namespace tbtune {

/// A candidate's tunable parameters, by name. Ordered, so printing and hashing are stable.
using Params = std::map<std::string, int>;

/// "k1=v1,k2=v2" in key order.
[[nodiscard]] std::string params_text(const Params& p);
/// Parses "k=v" items (as given to `--param`); throws UsageError.
[[nodiscard]] Params parse_params(const std::vector<std::string>& items);

/// Names of the two kernels every generated source defines. `kFullKernel` advances `depth`
/// steps per launch, the step kernel one step (it runs the remainder when steps % depth != 0):
/// `kStepKernel`, the strategy's own, or `kCellStepKernel`, one thread per interior cell
/// (templates/step.cuh), where the strategy's loop is too costly to build again for one step
/// (Strategy::step_kernel). The names differ so that a CUBIN is never run with the other's
/// geometry.
inline constexpr const char* kFullKernel = "tb_full";
inline constexpr const char* kStepKernel = "tb_step";
inline constexpr const char* kCellStepKernel = "tb_cell_step";
/// A kernel some strategies run beside `kFullKernel` in each of its passes, on a second stream:
/// the blocks of the pass that need handling the others do without (wpipe2d: the tiles that
/// meet the boundary ring), compiled apart so that their registers do not burden the others.
inline constexpr const char* kEdgeKernel = "tb_edge";
/// A kernel some strategies add for a run's last steps, problem.steps % depth of them: one
/// shallower pass of d steps instead of d one-step launches. Its name carries d (rest_kernel_name),
/// so that a CUBIN built for one step count is never run with another's geometry.
[[nodiscard]] std::string rest_kernel_name(int depth);

/// How one kernel is launched. Every kernel takes (const real* in, real* out, int nx, int ny,
/// int nz, real* scratch) and writes every interior cell of `out`; the boundary ring of `out`
/// must already hold the fixed values (the runner initialises both buffers identically).
struct Launch {
  std::array<unsigned, 3> grid{1, 1, 1};
  std::array<unsigned, 3> block{1, 1, 1};
  std::size_t dynamic_smem = 0;
  bool cooperative = false;   ///< launch with cudaLaunchCooperativeKernel (grid.sync() inside)
  std::size_t scratch_elems = 0;  ///< size of the `scratch` buffer the kernel needs
  /// Blocks of kEdgeKernel that run beside this (full) launch in the same pass, with the same
  /// block size and shared memory; none when zero. `grid` itself may then be empty.
  std::array<unsigned, 3> edge_grid{0, 0, 0};
};

/// Blocks in a launch grid.
[[nodiscard]] inline long blocks(const std::array<unsigned, 3>& grid) { return long(grid[0]) * grid[1] * grid[2]; }

/// Facts about the device the launch is for, read from the device or the compiled kernel.
struct LaunchContext {
  int sm_count = 0;
  int resident_blocks_per_sm = 1;  ///< occupancy of this kernel (from its real resource use)
};

class Strategy {
 public:
  virtual ~Strategy() = default;
  [[nodiscard]] virtual std::string name() const = 0;
  /// One line for `--help` and listings.
  [[nodiscard]] virtual std::string summary() const = 0;
  [[nodiscard]] virtual bool supports(const Problem& problem) const = 0;
  /// Every parameter point worth considering for `problem` on `device` (before the model).
  [[nodiscard]] virtual std::vector<Params> space(const Problem& problem,
                                                  const DeviceProfile& device) const = 0;
  /// Defaults filled in and values checked, for parameters a user gives by hand; throws UsageError.
  [[nodiscard]] virtual Params complete(const Problem& problem, const Params& given) const = 0;
  /// Why a completed candidate is not in space(problem, device), for the error of a `--param`
  /// that no candidate matches: empty where it is, or where the strategy does not say.
  [[nodiscard]] virtual std::string outside_space(const Problem& problem, const DeviceProfile& device,
                                                  const Params& params) const {
    (void)problem;
    (void)device;
    (void)params;
    return {};
  }
  /// Time steps one launch of kFullKernel advances.
  [[nodiscard]] virtual int depth(const Params& params) const = 0;
  /// The name of the step kernel, which runs the steps left when the step count is not a
  /// multiple of depth(), one per launch: kStepKernel by default, kCellStepKernel where the
  /// source's step kernel is templates/step.cuh's.
  [[nodiscard]] virtual const char* step_kernel() const { return kStepKernel; }
  /// The step kernel in the model's terms, which weigh those steps (search.cpp): a depth of 1.
  /// Strategies of depth 1 are their own step kernel.
  [[nodiscard]] virtual ModelTerms step_terms(const Problem& problem, const Params& params,
                                              const DeviceProfile& device) const {
    return model_terms(problem, params, device);
  }
  /// The candidate that the rest kernel (rest_kernel_name(depth of it)) is, where the source
  /// defines one: a pass of at most problem.steps % depth(params) steps, built and launched as
  /// this strategy's full kernel of these parameters (launch(problem, rest, true, ctx), with no
  /// edge grid). None by default; the step kernel then runs the remainder one step a launch.
  [[nodiscard]] virtual std::optional<Params> rest_params(const Problem& problem, const Params& params) const {
    (void)problem;
    (void)params;
    return std::nullopt;
  }
  /// Where `params` is a variant of another candidate of this strategy, the same shape built
  /// another way, that a model search times only in its place: the other's parameters (its
  /// primary). The variant is then never selected by itself, but comes first among the stand-ins
  /// when its primary is selected (search.hpp, stand_ins). None by default.
  [[nodiscard]] virtual std::optional<Params> primary_of(const Problem& problem, const DeviceProfile& device,
                                                         const Params& params) const {
    (void)problem;
    (void)device;
    (void)params;
    return std::nullopt;
  }
  /// Whether the variant `params` may hold fewer registers than its primary, so that it may fit
  /// where its primary spilled: only such a variant stands in for its primary (search.hpp,
  /// stand_ins). Yes by default.
  [[nodiscard]] virtual bool variant_may_fit_where_primary_spills(const Params& params) const {
    (void)params;
    return true;
  }
  /// How many times the registers its kernels hold the model's estimate (ModelTerms::
  /// regs_per_thread) may be where ptxas still fits them without spilling: a model search may
  /// choose a candidate whose estimate is that far over the register file, ptxas deciding after
  /// compiling (prune_after_compile), a stand-in taking the place of one that spills. 1 (the
  /// estimate is held to the register file) by default.
  [[nodiscard]] virtual double register_estimate_slack() const { return 1.0; }
  /// The candidate in the model's terms.
  [[nodiscard]] virtual ModelTerms model_terms(const Problem& problem, const Params& params,
                                               const DeviceProfile& device) const = 0;
  /// Complete CUDA source defining kFullKernel and step_kernel() as extern "C" kernels (and the
  /// rest kernel where rest_params has one).
  [[nodiscard]] virtual std::string source(const Problem& problem, const Params& params) const = 0;
  /// Launch geometry of kFullKernel (full = true) or the step kernel (full = false).
  [[nodiscard]] virtual Launch launch(const Problem& problem, const Params& params, bool full,
                                      const LaunchContext& ctx) const = 0;
};

/// All strategies, in a fixed order.
[[nodiscard]] const std::vector<std::unique_ptr<Strategy>>& strategies();
/// The strategy called `name`, or nullptr.
[[nodiscard]] const Strategy* find_strategy(const std::string& name);

}  // namespace tbtune
