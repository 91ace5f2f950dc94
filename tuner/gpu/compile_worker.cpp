#include "tuner/gpu/compile_worker.hpp"

#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tuner/spec/error.hpp"

namespace tbtune {

using nlohmann::json;

JobResult handle_compile_job(const std::string& request) {
  const json j = json::parse(request);
  try {
    const CompiledModule m = compile_cuda(j.at("source").get<std::string>(), j.at("arch").get<std::string>(),
                                          j.at("cache_dir").get<std::string>());
    // dump() escapes every newline inside strings, so the first '\n' ends the JSON.
    return {json{{"log", m.log}, {"from_cache", m.from_cache}}.dump() + '\n' + m.cubin};
  } catch (const CompileError& e) {
    return {json{{"error", "compile"}, {"message", e.what()}, {"log", e.log()}}.dump() + '\n'};
  }
}

int run_compile_worker(int fd) {
  serve_jobs(fd, handle_compile_job);
  return 0;
}

CompileProcesses::CompileProcesses(Launcher launcher) : launcher_(std::move(launcher)) {}

CompileProcesses::~CompileProcesses() = default;  // each Supervisor ends its child

namespace {

CompiledModule module_from_reply(const std::string& reply) {
  const std::size_t end = reply.find('\n');
  json j;
  CompiledModule m;
  try {
    if (end == std::string::npos) throw std::invalid_argument("no header line");
    j = json::parse(reply.substr(0, end));
    if (!j.contains("error")) {
      m.log = j.at("log").get<std::string>();
      m.from_cache = j.at("from_cache").get<bool>();
    }
  } catch (const std::exception& e) {  // a JSON error is no tbtune Error: the engine would not catch it
    throw Error(std::string("the compile process sent a malformed reply: ") + e.what());
  }
  if (j.contains("error"))
    throw CompileError(j.value("message", std::string("NVRTC failed")), j.value("log", std::string()));
  m.cubin = reply.substr(end + 1);
  m.kernels = parse_ptxas_log(m.log);
  return m;
}

}  // namespace

CompiledModule CompileProcesses::compile(const std::string& source, const std::string& arch,
                                         const std::string& cache_dir) {
  const std::string request = json{{"source", source}, {"arch", arch}, {"cache_dir", cache_dir}}.dump();
  // A kept child may be dying as this thread takes it over (it died with a thread that had the
  // same id: ensure_started), so a kept child that dies is replaced once.
  for (int attempt = 0;; ++attempt) {
    Supervisor* child = nullptr;
    bool fresh = false;
    pid_t pid = -1;
    {
      const std::lock_guard lock(mutex_);
      if (stopped_) throw Error("compile not started: the compiles were stopped");
      std::unique_ptr<Supervisor>& mine = children_[std::this_thread::get_id()];
      if (!mine) mine = std::make_unique<Supervisor>(launcher_);
      // Started under the lock, so that stop() either comes first or finds the child to kill.
      fresh = mine->ensure_started();
      child = mine.get();
      pid = child->pid();
      busy_.insert(child);
    }
    CallResult r;
    try {
      r = child->call(request, 0);
    } catch (...) {
      const std::lock_guard lock(mutex_);
      busy_.erase(child);
      throw;
    }
    bool stopped = false;
    {
      const std::lock_guard lock(mutex_);
      busy_.erase(child);
      stopped = stopped_;
    }
    switch (r.kind) {
      case CallResult::Kind::Reply:
        return module_from_reply(r.text);
      case CallResult::Kind::Failure:
        throw Error("the compile process failed: " + r.text);
      case CallResult::Kind::Died:
      case CallResult::Kind::TimedOut:
        // Killed while it wrote a CUBIN or log, the child left its temporary (reaped, its pid
        // is free again, but a new process of the same pid writing to this folder in the
        // moment since is not a case worth a lock).
        remove_partial_writes(cache_dir, pid);
        break;
    }
    if (stopped) throw Error("compile stopped: its result was no longer needed");
    if (fresh || attempt > 0)
      throw Error(fmt::format("the compile process ended before answering ({})", r.text));
  }
}

void CompileProcesses::stop() {
  const std::lock_guard lock(mutex_);
  stopped_ = true;
  for (Supervisor* s : busy_) s->interrupt();
}

}  // namespace tbtune
