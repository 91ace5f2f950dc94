// `tbtune emit SPEC --strategy S`: write the generated CUDA source of one candidate and compile
// it with NVRTC, reporting registers, spills and shared memory. Needs no GPU.
#include <fstream>
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "tuner/codegen/strategy.hpp"
#include "tuner/gpu/nvrtc.hpp"
#include "tuner/spec/error.hpp"

namespace tbtune::cli {
namespace {

struct EmitArgs {
  ProblemArgs problem;
  std::string strategy = "naive";
  std::vector<std::string> params;
  std::string arch = "sm_90";
  std::string output;
  bool no_compile = false;
  bool json = false;
};

int run_emit(const EmitArgs& a) {
  const Problem p = a.problem.load();
  const Strategy* s = find_strategy(a.strategy);
  if (!s) {
    std::string names;
    for (const auto& x : strategies()) names += (names.empty() ? "" : ", ") + x->name();
    throw UsageError("--strategy '" + a.strategy + "': no such strategy (have: " + names + ")");
  }
  if (!s->supports(p)) throw UsageError("strategy '" + s->name() + "' does not support this stencil");
  const Params params = s->complete(p, parse_params(a.params));
  const std::string source = s->source(p, params);
  if (!a.output.empty()) {
    std::ofstream f(a.output);
    f << source;
    if (!f) throw Error("cannot write '" + a.output + "'");
  } else if (!a.json) {
    std::cout << source;
  }
  if (a.no_compile) return kOk;
  const CompiledModule m = compile_cuda(source, a.arch);
  // With the source on stdout, the report goes to stderr so the two can be separated.
  std::ostream& report = a.output.empty() ? std::cerr : std::cout;
  nlohmann::json kernels = nlohmann::json::object();
  for (const auto& [name, k] : m.kernels) {
    kernels[name] = {{"registers", k.registers}, {"spill_stores", k.spill_stores},
                     {"spill_loads", k.spill_loads}, {"stack_bytes", k.stack_bytes},
                     {"smem_bytes", k.smem_bytes}};
    if (!a.json)
      report << fmt::format("{}: {} registers, {} bytes spill stores, {} bytes spill loads, {} bytes "
                            "stack frame, {} bytes static smem ({} {}, {})\n", name, k.registers,
                            k.spill_stores, k.spill_loads, k.stack_bytes, k.smem_bytes, s->name(),
                            params_text(params), a.arch);
  }
  if (a.json) {
    nlohmann::json j{{"strategy", s->name()}, {"params", params_json(params)}, {"arch", a.arch},
                     {"cubin_bytes", m.cubin.size()}, {"kernels", kernels}, {"output", a.output}};
    if (a.output.empty()) j["source"] = source;
    std::cout << j.dump(2) << '\n';
  }
  return kOk;
}

}  // namespace

void add_emit_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<EmitArgs>();
  std::string names;
  for (const auto& s : strategies()) names += "\n  " + s->name() + ": " + s->summary();
  CLI::App* cmd = app.add_subcommand(
      "emit", "Write the generated CUDA source for one candidate and compile it with NVRTC (no GPU "
              "needed); prints registers, spills and shared memory per kernel.\nStrategies:" + names);
  args->problem.add_to(cmd);
  cmd->add_option("--strategy", args->strategy, "kernel strategy")->capture_default_str();
  cmd->add_option("--param", args->params, "parameter NAME=VALUE (repeatable); others get defaults");
  cmd->add_option("--arch", args->arch, "GPU architecture to compile for")->capture_default_str();
  cmd->add_option("-o,--output", args->output, "write the source here instead of stdout");
  cmd->add_flag("--no-compile", args->no_compile, "only write the source");
  cmd->add_flag("--json", args->json, "print JSON (with the source unless -o is given)");
  cmd->callback([&action, args] { action = [args] { return run_emit(*args); }; });
}

}  // namespace tbtune::cli
