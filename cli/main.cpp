// tbtune: find the fastest temporal-blocking kernel for a stencil on this GPU, and remember it.
// main only wires subcommands and maps errors to exit codes; each subcommand lives in its own file.
#include <csignal>
#include <iostream>

#include "cli/commands.hpp"
#include "tuner/spec/error.hpp"

namespace {

const char* kDescription =
    "tbtune: autotunes temporal-blocking stencil kernels (EBISU-style) for the NVIDIA GPU at hand\n"
    "and keeps the winner in an SQLite cache.\n\n"
    "Typical use:\n"
    "  tbtune check configs/j2d5pt.yaml     validate a spec, show its properties\n"
    "  tbtune model configs/j2d5pt.yaml     rank candidates with the performance model (no GPU)\n"
    "  tbtune tune  configs/j2d5pt.yaml     compile, verify and time candidates; store the winner\n"
    "  tbtune lookup configs/j2d5pt.yaml    the stored winner (exit 0 hit, 1 miss, 2 error)\n\n"
    "Exit codes: 0 success, 1 lookup miss, 2 error (the message says what), 130 interrupted.";

}  // namespace

int main(int argc, char** argv) {
  using namespace tbtune;
  CLI::App app{kDescription, "tbtune"};
  app.set_version_flag("--version", std::string("tbtune ") + TBTUNE_VERSION);
  app.require_subcommand(1);
  // Bad flags get one line (README "Exit codes"), not CLI11's two.
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return std::string("tbtune: ") + e.what() + " (see tbtune --help)\n";
  });
  cli::Action action;
  cli::add_check_command(app, action);
  cli::add_model_command(app, action);
  cli::add_tune_command(app, action);
  cli::add_lookup_command(app, action);
  cli::add_emit_command(app, action);
  cli::add_db_command(app, action);
  cli::add_probe_command(app, action);
  cli::add_report_command(app, action);
  cli::add_sweep_command(app, action);
  cli::add_worker_command(app, action);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : cli::kError;
  }
  try {
    return action ? action() : cli::kOk;
  } catch (const CompileError& e) {
    std::cerr << "tbtune: " << e.what() << '\n' << e.log() << '\n';
  } catch (const Error& e) {
    std::cerr << "tbtune: " << e.what() << '\n';
  } catch (const std::exception& e) {
    std::cerr << "tbtune: unexpected error: " << e.what() << '\n';
  }
  return cli::kError;
}
