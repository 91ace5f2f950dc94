// The `naive` strategy: one thread per cell, one launch per step. It has no parameters; the
// tuner runs it first as the reference every other candidate is checked against.
#include "tuner/codegen/strategies/strategies.hpp"

#include "tuner/codegen/codegen.hpp"
#include "tuner/codegen/strategies/naive_step.hpp"
#include "tuner/spec/error.hpp"

namespace tbtune {
namespace {

// 2D blocks of 32 x 8; 3D blocks of 32 x 4 x 2: a warp spans x for coalescing.
struct Block { int x, y, z; };
Block block_of(const Problem& p) { return p.dims() == 2 ? Block{32, 8, 1} : Block{32, 4, 2}; }

}  // namespace

Defines naive_step_defines(const Problem& p) {
  const Block b = block_of(p);
  return {{"TB_STEP_BX", b.x}, {"TB_STEP_BY", b.y}, {"TB_STEP_BZ", b.z}};
}

Launch naive_step_launch(const Problem& p) {
  const Block b = block_of(p);
  const int r = p.stencil.radius;
  Launch l;
  l.block = {unsigned(b.x), unsigned(b.y), unsigned(b.z)};
  l.grid = {ceil_div(p.domain[0] - 2 * r, b.x), ceil_div(p.domain[1] - 2 * r, b.y),
            p.dims() == 3 ? ceil_div(p.domain[2] - 2 * r, b.z) : 1u};
  return l;
}

ModelTerms naive_step_terms(const Problem& p) {
  const Block b = block_of(p);
  ModelTerms m;
  m.depth = 1;
  m.a_gm = 2;  // one read and one write per cell, neighbours assumed to hit in cache
  m.a_sm = 0;
  m.a_cmp = p.stencil.flops;
  m.threads = b.x * b.y * b.z;
  m.blocks_per_sm = 2048 / m.threads;
  m.ilp = 1;
  return m;
}

namespace {

class Naive final : public Strategy {
 public:
  std::string name() const override { return "naive"; }
  std::string summary() const override {
    return "one thread per cell, one launch per step (reference and speed floor)";
  }
  bool supports(const Problem&) const override { return true; }
  std::vector<Params> space(const Problem&, const DeviceProfile&) const override { return {Params{}}; }
  Params complete(const Problem&, const Params& given) const override {
    if (!given.empty()) throw UsageError("strategy 'naive' takes no parameters");
    return {};
  }
  int depth(const Params&) const override { return 1; }

  ModelTerms model_terms(const Problem& p, const Params&, const DeviceProfile&) const override {
    return naive_step_terms(p);
  }

  std::string source(const Problem& p, const Params&) const override {
    return assemble_source(p, naive_step_defines(p), {"step.cuh", "naive.cuh"});
  }

  Launch launch(const Problem& p, const Params&, bool, const LaunchContext&) const override {
    return naive_step_launch(p);
  }
};

}  // namespace

std::unique_ptr<Strategy> make_naive_strategy() { return std::make_unique<Naive>(); }

}  // namespace tbtune
