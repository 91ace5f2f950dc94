#include "cli/common.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <iostream>

#include "db/cache.hpp"
#include "tuner/spec/error.hpp"

namespace tbtune::cli {

void ProblemArgs::add_to(CLI::App* cmd, bool with_steps) {
  cmd->add_option("SPEC", spec_path, "stencil spec (YAML), e.g. configs/j2d5pt.yaml")->required();
  cmd->add_option("--domain", domain,
                  "array size with the boundary ring, NXxNY or NXxNYxNZ (default: the spec's)");
  if (with_steps)
    cmd->add_option("--steps", steps,
                    fmt::format("time steps, 1 to {} (default: the spec's)", kMaxSteps));
  cmd->add_option("--dtype", dtype, "float or double (default: the spec's)")
      ->check(CLI::IsMember({"float", "double"}));
}

Problem ProblemArgs::load(Spec* spec_out) const {
  Spec spec = load_spec(spec_path);
  if (!dtype.empty()) spec.dtype = dtype == "float" ? DType::Float : DType::Double;
  if (!steps.empty()) spec.steps = parse_steps(steps);
  Problem p = make_problem(spec);
  if (!domain.empty()) p.domain = parse_domain(domain, p.dims(), p.stencil.radius);
  if (spec_out) *spec_out = std::move(spec);
  return p;
}

std::array<long, 3> parse_domain(const std::string& text, int dims, int radius) {
  std::array<long, 3> d{1, 1, 1};
  std::size_t pos = 0;
  for (int axis = 0; axis < dims; ++axis) {
    const std::size_t end = axis + 1 < dims ? text.find('x', pos) : text.size();
    long v = 0;
    const char* first = text.data() + pos;
    const char* last = text.data() + (end == std::string::npos ? text.size() : end);
    auto [ptr, ec] = std::from_chars(first, last, v);
    if (end == std::string::npos || ec != std::errc() || ptr != last || first == last)
      throw UsageError(fmt::format("--domain '{}': expected {} positive integers joined by 'x', e.g. {}",
                                   text, dims, dims == 2 ? "4096x4096" : "256x256x256"));
    if (const std::string why = extent_problem(v, radius); !why.empty())
      throw UsageError(fmt::format("--domain '{}': {}", text, why));
    d[std::size_t(axis)] = v;
    pos = end + 1;
  }
  if (const std::string why = cells_problem(double(d[0]) * double(d[1]) * double(d[2])); !why.empty())
    throw UsageError(fmt::format("--domain '{}': {}", text, why));
  return d;
}

long parse_steps(const std::string& text) {
  long v = 0;
  const char* last = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), last, v);
  if (ec == std::errc::result_out_of_range)
    throw UsageError(fmt::format("--steps '{}': must be at most {}", text, kMaxSteps));
  if (ec != std::errc() || ptr != last || text.empty())
    throw UsageError(fmt::format("--steps '{}': expected an integer, e.g. 1000", text));
  if (const std::string why = steps_problem(v); !why.empty())
    throw UsageError(fmt::format("--steps {}", why));
  return v;
}

CLI::Validator finite_range(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& in) -> std::string {
        double v = 0;
        const char* last = in.data() + in.size();
        const auto [ptr, ec] = std::from_chars(in.data(), last, v);
        // `!(lo <= v && v <= hi)` so that nan, which compares false, is refused.
        if (ec != std::errc() || ptr != last || in.empty() || !(lo <= v && v <= hi))
          return fmt::format("expected a number from {:g} to {:g}, got '{}'", lo, hi, in);
        return "";
      },
      fmt::format("NUMBER in [{:g}, {:g}]", lo, hi));
}

void add_db_option(CLI::App* cmd, std::string& path) {
  cmd->add_option("--db", path, "cache file (default: $TBTUNE_DB, else $XDG_CACHE_HOME/tbtune/"
                                "tbtune.db, else ~/.cache/tbtune/tbtune.db)");
}

void print_table(const std::vector<std::string>& header,
                 const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width(header.size());
  for (std::size_t c = 0; c < header.size(); ++c) width[c] = header[c].size();
  for (const auto& r : rows)
    for (std::size_t c = 0; c < r.size() && c < width.size(); ++c) width[c] = std::max(width[c], r[c].size());
  auto line = [&](const std::vector<std::string>& r) {
    std::string out;
    for (std::size_t c = 0; c < r.size(); ++c) {
      out += fmt::format("{:<{}}", r[c], width[c]);
      if (c + 1 < r.size()) out += "  ";
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    std::cout << out << '\n';
  };
  line(header);
  for (const auto& r : rows) line(r);
}

nlohmann::json stencil_json(const Problem& p) {
  const Stencil& s = p.stencil;
  return {{"name", s.name}, {"hash", s.hash}, {"dims", s.dims}, {"dtype", dtype_name(p.dtype)},
          {"radius", s.radius}, {"points", s.points.size()}, {"flops", s.flops},
          {"shape", shape_name(s.shape)}, {"domain", std::vector<long>(p.domain.begin(), p.domain.begin() + s.dims)},
          {"steps", p.steps}};
}

nlohmann::json params_json(const Params& p) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [k, v] : p) j[k] = v;
  return j;
}

nlohmann::json trial_json(const Trial& t) {
  return {{"strategy", t.strategy}, {"params", params_json(t.params)},
          {"status", trial_status_name(t.status)}, {"message", t.message},
          {"gcells", t.gcells_median}, {"gcells_best", t.gcells_best},
          {"seconds", t.seconds_median}, {"repetitions", t.repetitions},
          {"max_error", t.max_rel_error}, {"predicted_PP_gcells", t.predicted.PP_gcells},
          {"registers", t.registers}, {"spill_bytes", t.spill_bytes}, {"smem_bytes", t.smem_bytes},
          {"reused", t.reused}};
}

std::string fixed(double v, int decimals) { return fmt::format("{:.{}f}", v, decimals); }

}  // namespace tbtune::cli
