#pragma once
/// @file compile_worker.hpp
/// NVRTC compiles in child processes (`tbtune compile-worker`), so that a compile no longer
/// needed can be ended: NVRTC cannot be stopped midway in a thread, but its process can be
/// killed. The tuning engine compiles stand-ins ahead of need this way, and ends its search
/// (or a stop or the budget ends it) without waiting for the compiles still running.
///
/// Request (JSON): {"source", "arch", "cache_dir"}. Reply: a JSON line {"log", "from_cache"}
/// followed by the CUBIN's bytes, or the line {"error": "compile", "message", "log"} alone.
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "tuner/gpu/nvrtc.hpp"
#include "tuner/gpu/protocol.hpp"
#include "tuner/gpu/supervisor.hpp"

namespace tbtune {

/// Answers one compile request with compile_cuda's result (a CompileError is a reply, not a
/// failure, so that the parent sees NVRTC's log).
[[nodiscard]] JobResult handle_compile_job(const std::string& request);

/// `tbtune compile-worker`: serves compile jobs on file descriptor `fd` until the parent closes
/// it; returns the process exit code.
int run_compile_worker(int fd);

/// The parent's side: each calling thread's compiles run in a child of its own, started by
/// `launcher` on its first compile and kept for the next, so as many compiles run at once as
/// threads call compile(). A child is the thread's because it dies with the thread that
/// started it (Supervisor::ensure_started); it ends with the thread or with this object.
class CompileProcesses {
 public:
  explicit CompileProcesses(Launcher launcher);
  ~CompileProcesses();
  CompileProcesses(const CompileProcesses&) = delete;
  CompileProcesses& operator=(const CompileProcesses&) = delete;

  /// What compile_cuda(source, arch, cache_dir) returns, computed in a child; throws
  /// CompileError as it does, and Error when the child dies or stop() ended it. Thread-safe.
  [[nodiscard]] CompiledModule compile(const std::string& source, const std::string& arch,
                                       const std::string& cache_dir);

  /// Kills the children compiling now (their compile() calls throw) and refuses later
  /// compiles: for when no result is needed any more. Thread-safe.
  void stop();

 private:
  Launcher launcher_;
  std::mutex mutex_;  // guards the three below
  bool stopped_ = false;
  std::map<std::thread::id, std::unique_ptr<Supervisor>> children_;  // by calling thread
  std::set<Supervisor*> busy_;                                       // those compiling now
};

}  // namespace tbtune
