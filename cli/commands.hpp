#pragma once
/// @file commands.hpp
/// One function per subcommand (one file each): it registers the subcommand, its options and its
/// --help text, and when the subcommand is chosen stores its body in `action` for main to run.
#include "cli/common.hpp"

namespace tbtune::cli {

void add_tune_command(CLI::App& app, Action& action);
void add_lookup_command(CLI::App& app, Action& action);
void add_check_command(CLI::App& app, Action& action);
void add_emit_command(CLI::App& app, Action& action);
void add_model_command(CLI::App& app, Action& action);
void add_db_command(CLI::App& app, Action& action);
void add_probe_command(CLI::App& app, Action& action);
void add_report_command(CLI::App& app, Action& action);
void add_sweep_command(CLI::App& app, Action& action);
void add_worker_command(CLI::App& app, Action& action);

}  // namespace tbtune::cli
