// `tbtune check SPEC`: validate a spec and print what tbtune derives from it.
#include <iostream>

#include "cli/commands.hpp"

namespace tbtune::cli {
namespace {

struct CheckArgs {
  ProblemArgs problem;
  bool json = false;
};

int run_check(const CheckArgs& a) {
  const Problem p = a.problem.load();
  if (a.json) {
    nlohmann::json j = stencil_json(p);
    j["canonical"] = p.stencil.canonical;
    std::cout << j.dump(2) << '\n';
    return kOk;
  }
  const Stencil& s = p.stencil;
  std::cout << a.problem.spec_path << ": ok\n";
  print_table({"property", "value"},
              {{"name", s.name},
               {"dims", std::to_string(s.dims)},
               {"dtype", dtype_name(p.dtype)},
               {"shape", shape_name(s.shape)},
               {"radius", std::to_string(s.radius)},
               {"points", std::to_string(s.points.size())},
               {"flops per cell", std::to_string(s.flops)},
               {"domain", std::to_string(p.domain[0]) + "x" + std::to_string(p.domain[1]) +
                              (s.dims == 3 ? "x" + std::to_string(p.domain[2]) : "")},
               {"steps", std::to_string(p.steps)},
               {"hash", s.hash}});
  return kOk;
}

}  // namespace

void add_check_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<CheckArgs>();
  CLI::App* cmd = app.add_subcommand(
      "check", "Validate a stencil spec and print its derived properties (radius, points, flops, "
               "shape, hash). Errors name the file, line and column.");
  args->problem.add_to(cmd);
  cmd->add_flag("--json", args->json, "print JSON instead of a table");
  cmd->callback([&action, args] { action = [args] { return run_check(*args); }; });
}

}  // namespace tbtune::cli
