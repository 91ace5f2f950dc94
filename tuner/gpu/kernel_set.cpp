#include "tuner/gpu/kernel_set.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "tuner/spec/error.hpp"

namespace tbtune {
namespace {

// Occupancy from the kernel's real resource use, then the strategy's geometry for it.
// `what` names the kernel in errors ("full", "step", "rest").
Launch resolve(const Strategy& s, const Problem& p, const Params& params, bool full, const char* what,
               const void* kernel, const DeviceInfo& d) {
  LaunchContext ctx{d.sm_count, 1};
  Launch l = s.launch(p, params, full, ctx);  // block size and smem do not depend on ctx
  // Checked here rather than left to the driver, whose "invalid argument" would not say why.
  if (long(l.dynamic_smem) > d.smem_per_block_optin)
    throw Error(fmt::format("{} kernel needs {} bytes of shared memory per block; the device allows {}",
                            what, l.dynamic_smem, d.smem_per_block_optin));
  ctx.resident_blocks_per_sm = resident_blocks_per_sm(kernel, l);
  if (ctx.resident_blocks_per_sm == 0)
    throw Error(fmt::format("{} kernel cannot run: {} threads with {} bytes of dynamic shared memory "
                            "do not fit on one SM", what,
                            l.block[0] * l.block[1] * l.block[2], l.dynamic_smem));
  l = s.launch(p, params, full, ctx);
  if (l.cooperative && blocks(l.grid) > long(ctx.resident_blocks_per_sm) * d.sm_count)
    throw Error(fmt::format("{} kernel needs {} co-resident blocks but only {} x {} SMs fit",
                            what, blocks(l.grid), ctx.resident_blocks_per_sm, d.sm_count));
  return l;
}

}  // namespace

bool cubin_names_kernel(const std::string& cubin, const char* name) {
  // An ELF string table holds each name between two NULs; a section's name (".text.<name>")
  // or a longer kernel's name has other bytes before or after it.
  std::string whole(1, '\0');
  whole += name;
  whole += '\0';
  return cubin.find(whole) != std::string::npos;
}

KernelSet::KernelSet(const Strategy& strategy, const Params& params, const Problem& problem,
                     const std::string& cubin, const DeviceInfo& device)
    : problem_(problem), module_(std::make_unique<LoadedModule>(cubin)), depth_(strategy.depth(params)) {
  full_ = module_->kernel(kFullKernel);
  step_ = module_->find_kernel(strategy.step_kernel());
  if (!step_)
    throw Error(fmt::format("the {} CUBIN has no step kernel '{}': it was built by an earlier tbtune, whose step "
                            "kernel this one would launch wrongly; tune again",
                            strategy.name(), strategy.step_kernel()));
  full_launch_ = resolve(strategy, problem, params, true, "full", full_, device);
  step_launch_ = resolve(strategy, problem, params, false, "step", step_, device);
  if (blocks(full_launch_.edge_grid) > 0) {
    edge_ = module_->kernel(kEdgeKernel);
    if (resident_blocks_per_sm(edge_, full_launch_) == 0)
      throw Error(fmt::format("edge kernel cannot run: {} threads with {} bytes of dynamic shared memory do not "
                              "fit on one SM", full_launch_.block[0], full_launch_.dynamic_smem));
    side_ = std::make_unique<SideStream>();
  }
  // The rest kernel for this problem's remainder, if the CUBIN was built for the same one: an
  // application may run a winner tuned for another step count.
  if (const auto rest = strategy.rest_params(problem, params)) {
    rest_depth_ = strategy.depth(*rest);
    rest_ = module_->find_kernel(rest_kernel_name(rest_depth_).c_str());
    if (rest_) {
      rest_launch_ = resolve(strategy, problem, *rest, true, "rest", rest_, device);
      if (blocks(rest_launch_.edge_grid) > 0) throw Error("rest kernel: launch with an edge grid");
    }
  }
  const std::size_t elems =
      std::max({full_launch_.scratch_elems, step_launch_.scratch_elems, rest_launch_.scratch_elems});
  if (elems) scratch_ = DeviceBuffer(elems * std::size_t(dtype_bytes(problem.dtype)));
}

void* KernelSet::run(void* a, void* b, long steps, void* stream) {
  const int nx = int(problem_.domain[0]), ny = int(problem_.domain[1]), nz = int(problem_.domain[2]);
  const long full_launches = steps / depth_, rest = steps % depth_;
  const long rest_launches = rest_ ? rest / rest_depth_ : 0;
  const long total = full_launches + rest_launches + (rest - rest_launches * rest_depth_);
  for (long i = 0; i < total; ++i) {
    if (i >= full_launches + rest_launches) {
      launch_kernel(step_, step_launch_, a, b, nx, ny, nz, scratch_.get(), stream);
    } else if (i >= full_launches) {
      launch_kernel(rest_, rest_launch_, a, b, nx, ny, nz, scratch_.get(), stream);
    } else if (!edge_) {
      launch_kernel(full_, full_launch_, a, b, nx, ny, nz, scratch_.get(), stream);
    } else {
      // The edge kernel's blocks take the pass's other cells, at the same time.
      side_->beside(stream, [&](void* side) {
        Launch edge = full_launch_;
        edge.grid = edge.edge_grid;
        launch_kernel(edge_, edge, a, b, nx, ny, nz, scratch_.get(), side);
        if (blocks(full_launch_.grid) > 0) launch_kernel(full_, full_launch_, a, b, nx, ny, nz, scratch_.get(), stream);
      });
    }
    std::swap(a, b);
  }
  return a;
}

}  // namespace tbtune
