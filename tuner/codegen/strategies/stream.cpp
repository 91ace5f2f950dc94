// The `stream` strategy: spatial blocking with one step per launch. Block shape and cells per
// thread are the parameters. It is the fastest one-step-per-launch kernel and the baseline the
// temporal-blocking strategies must beat.
#include "tuner/codegen/strategies/strategies.hpp"

#include <fmt/format.h>

#include "tuner/codegen/codegen.hpp"
#include "tuner/spec/error.hpp"

namespace tbtune {
namespace {

// Blocks per SM: as many as fill its 2048 threads (the kernel is built for them: stream.cuh).
int blocks_per_sm(const Params& k) { return std::max(1, 2048 / (k.at("bx") * k.at("by"))); }

class Stream final : public Strategy {
 public:
  std::string name() const override { return "stream"; }
  std::string summary() const override {
    return "spatial blocking, one step per launch; params bx, by, ppt (cells per thread)";
  }
  bool supports(const Problem&) const override { return true; }

  std::vector<Params> space(const Problem&, const DeviceProfile&) const override {
    std::vector<Params> out;
    for (int bx : {32, 64, 128, 256})
      for (int by : {1, 2, 4, 8})
        for (int ppt : {1, 2, 4, 8})
          if (bx * by >= 64 && bx * by <= 1024) out.push_back({{"bx", bx}, {"by", by}, {"ppt", ppt}});
    return out;
  }

  Params complete(const Problem&, const Params& given) const override {
    Params p{{"bx", 32}, {"by", 4}, {"ppt", 4}};
    for (const auto& [k, v] : given) {
      if (!p.count(k)) throw UsageError(fmt::format("strategy 'stream' has no parameter '{}' (bx, by, ppt)", k));
      p[k] = v;
    }
    if (p["bx"] < 1 || p["by"] < 1 || p["ppt"] < 1 || p["ppt"] > 32 || p["bx"] * p["by"] > 1024)
      throw UsageError("stream: need bx, by, ppt >= 1, ppt <= 32 and bx * by <= 1024");
    return p;
  }
  int depth(const Params&) const override { return 1; }

  ModelTerms model_terms(const Problem& p, const Params& k, const DeviceProfile&) const override {
    ModelTerms m;
    m.depth = 1;
    m.a_gm = 2;
    m.a_cmp = p.stencil.flops;
    m.threads = k.at("bx") * k.at("by");
    m.blocks_per_sm = blocks_per_sm(k);
    m.ilp = k.at("ppt");
    return m;
  }

  std::string source(const Problem& p, const Params& k) const override {
    return assemble_source(p,
                           {{"TB_BX", k.at("bx")}, {"TB_BY", k.at("by")}, {"TB_PPT", k.at("ppt")},
                            {"TB_MIN_BLOCKS", blocks_per_sm(k)}},
                           {"stream.cuh"});
  }

  Launch launch(const Problem& p, const Params& k, bool, const LaunchContext&) const override {
    const int r = p.stencil.radius;
    const int bx = k.at("bx"), by = k.at("by"), ppt = k.at("ppt");
    Launch l;
    l.block = {unsigned(bx), unsigned(by), 1};
    if (p.dims() == 2)
      l.grid = {ceil_div(p.domain[0] - 2 * r, bx), ceil_div(p.domain[1] - 2 * r, by * ppt), 1};
    else
      l.grid = {ceil_div(p.domain[0] - 2 * r, bx), ceil_div(p.domain[1] - 2 * r, by),
                ceil_div(p.domain[2] - 2 * r, ppt)};
    return l;
  }
};

}  // namespace

std::unique_ptr<Strategy> make_stream_strategy() { return std::make_unique<Stream>(); }

}  // namespace tbtune
