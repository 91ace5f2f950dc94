#pragma once
/// @file supervisor.hpp
/// Runs jobs in a child process and survives it: a child that crashes (abort, SIGSEGV, a CUDA
/// error that poisons its context) or does not answer in time is killed, reaped and reported,
/// and the next job starts a fresh child. Knows nothing of CUDA: what the child runs is the
/// Launcher's business, so the machinery is tested on CPU with planted handlers.
#include <sys/types.h>

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace tbtune {

/// Runs in the child right after fork(), with the child's end of the channel. It either
/// exec()s or serves jobs itself; if it returns, the child exits with status 0. The child
/// ignores SIGINT and SIGTERM (the parent decides when it ends; a Ctrl-C reaches the whole
/// process group) and is killed when the parent dies.
using Launcher = std::function<void(int fd)>;

/// A Launcher that exec()s `argv[0]` with `argv`, the channel on file descriptor 3. Everything
/// it needs is prepared here, so the child calls nothing but async-signal-safe functions
/// (the parent has compile threads running when it forks).
[[nodiscard]] Launcher exec_launcher(std::vector<std::string> argv);

/// A Launcher that serves jobs in the forked child with `handler` (no exec). For tests, and for
/// callers whose process has not touched CUDA: a forked child cannot use a CUDA context
/// initialised before the fork.
[[nodiscard]] Launcher fork_launcher(std::function<void(int fd)> serve);

/// How one call ended.
struct CallResult {
  enum class Kind {
    Reply,     ///< the child answered; `text` is the reply
    Failure,   ///< the child's handler threw; `text` is its message; the child lives on
    Died,      ///< the child died or closed the channel; `text` says how ("killed by signal 11 ...")
    TimedOut,  ///< no answer in time; the child was killed; `text` says after how long
  };
  Kind kind = Kind::Reply;
  std::string text;
};

class Supervisor {
 public:
  explicit Supervisor(Launcher launcher);
  /// Closes the channel, gives the child a moment to exit, then kills it.
  ~Supervisor();
  Supervisor(const Supervisor&) = delete;
  Supervisor& operator=(const Supervisor&) = delete;

  /// Starts a child if none is running (reaping one that ended meanwhile); true when it started
  /// one (the caller may owe the new child some set-up jobs). The child is killed when the
  /// thread that started it ends (PR_SET_PDEATHSIG). Throws Error when fork() fails.
  bool ensure_started();
  /// Sends `request` (starting a child if needed) and waits up to `timeout_s` seconds (<= 0:
  /// forever) for the answer.
  [[nodiscard]] CallResult call(const std::string& request, double timeout_s);
  /// Ends the child now (SIGKILL) and reaps it.
  void kill_child();
  /// Sends SIGKILL to the child, if one runs, without reaping it: the one call that may come
  /// from another thread, while call() waits (which then reports Died). The child's pid is
  /// reaped only under the same lock, so the signal never reaches a process that took it over.
  void interrupt();

  [[nodiscard]] bool running() const { return pid_ > 0; }
  [[nodiscard]] int starts() const { return starts_; }
  [[nodiscard]] pid_t pid() const { return pid_; }

 private:
  /// Reaps the child (waiting for it, after SIGKILL when `kill` is true) and says how it ended.
  std::string reap(bool kill);

  Launcher launcher_;
  std::mutex pid_mutex_;  // held while pid_ is set or reaped, and by interrupt()
  pid_t pid_ = -1;
  int fd_ = -1;
  int starts_ = 0;
};

}  // namespace tbtune
