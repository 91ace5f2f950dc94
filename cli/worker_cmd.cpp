// `tbtune worker` and `tbtune compile-worker`: hidden. The GPU worker process that `tbtune tune`
// starts and supervises (tuner/gpu/worker.hpp), and its NVRTC compile processes
// (tuner/gpu/compile_worker.hpp); each talks to its parent over file descriptor 3 and prints
// nothing.
#include "cli/commands.hpp"
#include "tuner/gpu/compile_worker.hpp"
#include "tuner/gpu/worker.hpp"

#include <fcntl.h>

#include "tuner/spec/error.hpp"

namespace tbtune::cli {

void add_worker_command(CLI::App& app, Action& action) {
  CLI::App* cmd = app.add_subcommand("worker", "internal: the GPU worker of `tbtune tune`");
  cmd->group("");  // hidden from --help: not for people to run
  cmd->callback([&action] {
    action = [] {
      if (fcntl(3, F_GETFD) < 0)
        throw UsageError("`tbtune worker` is started by `tbtune tune`, not by hand");
      return run_worker(3);
    };
  });
  CLI::App* compile = app.add_subcommand("compile-worker", "internal: an NVRTC compile process of `tbtune tune`");
  compile->group("");
  compile->callback([&action] {
    action = [] {
      if (fcntl(3, F_GETFD) < 0)
        throw UsageError("`tbtune compile-worker` is started by `tbtune tune`, not by hand");
      return run_compile_worker(3);
    };
  });
}

}  // namespace tbtune::cli
