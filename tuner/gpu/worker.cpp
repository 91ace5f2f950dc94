#include "tuner/gpu/worker.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "model/profile_json.hpp"
#include "tuner/gpu/messages.hpp"
#include "tuner/gpu/nvrtc.hpp"
#include "tuner/gpu/plant.hpp"
#include "tuner/gpu/probe.hpp"
#include "tuner/spec/error.hpp"

namespace tbtune {

using nlohmann::json;

struct GpuWorker::State {
  std::optional<DeviceInfo> device;
  std::optional<Problem> problem;
  TimingOptions timing;
  std::unique_ptr<Runner> runner;
  std::string reference_path;  ///< the file `reference` was read from
  DeviceBuffer reference;      ///< its contents, on the device
};

namespace {

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(fmt::format("the worker cannot read '{}'", path));
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

void write_file_atomic(const std::string& path, const std::vector<unsigned char>& bytes) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary);
    f.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
    if (!f) throw Error(fmt::format("the worker cannot write '{}'", tmp));
  }
  std::filesystem::rename(tmp, path);
}

const DeviceInfo& open(GpuWorker::State& s, int index) {
  if (!s.device || s.device->index != index) s.device = open_device(index);
  return *s.device;
}

json measure(GpuWorker::State& s, const json& req) {
  if (!s.runner || !s.problem) throw Error("the worker got a measure job before its setup");
  const DeviceInfo& d = *s.device;
  plant_failure_if_asked(req.at("index").get<int>(), arch_for(d.cc_major, d.cc_minor));
  const std::string name = req.at("strategy").get<std::string>();
  const Strategy* strategy = find_strategy(name);
  if (!strategy) throw Error(fmt::format("the worker knows no strategy '{}'", name));
  Params params;
  for (const auto& [k, v] : req.at("params").items()) params[k] = v.get<int>();
  CompiledModule module;
  module.cubin = read_file(req.at("cubin").get<std::string>());
  module.log = req.at("log").get<std::string>();
  module.kernels = parse_ptxas_log(module.log);

  const std::string ref_path = req.at("reference").get<std::string>();
  const DeviceBuffer* reference = nullptr;
  if (!ref_path.empty()) {
    // Read and uploaded once per worker: a restarted worker reads it again from the file.
    if (s.reference_path != ref_path) {
      s.reference_path.clear();
      const std::string bytes = read_file(ref_path);
      const std::size_t expected = s.runner->result_bytes();
      if (bytes.size() != expected)
        throw Error(fmt::format("reference '{}' holds {} bytes, not {}", ref_path, bytes.size(), expected));
      s.reference.upload(bytes.data(), expected);
      s.reference_path = ref_path;
    }
    reference = &s.reference;
  }
  const std::string save_path = req.at("save_output").get<std::string>();
  std::vector<unsigned char> output;
  try {
    const Measurement m = s.runner->measure(*strategy, params, module, reference, s.timing,
                                            save_path.empty() ? nullptr : &output);
    if (!save_path.empty()) write_file_atomic(save_path, output);
    return {{"status", "ok"}, {"measurement", measurement_to_json(m)}};
  } catch (const CudaError&) {
    throw;  // handled by the caller: the context may be poisoned
  } catch (const Error& e) {
    // KernelSet's "cannot be launched as built" (occupancy, co-residency).
    return {{"status", "resources"}, {"message", e.what()}};
  }
}

}  // namespace

GpuWorker::GpuWorker() : state_(std::make_unique<State>()) {}
GpuWorker::~GpuWorker() = default;

JobResult GpuWorker::handle(const std::string& text) {
  State& s = *state_;
  json req;
  try {
    req = json::parse(text);
    const std::string op = req.at("op").get<std::string>();
    if (op == "hello") return {json{{"device", device_to_json(open(s, req.at("device").get<int>()))}}.dump()};
    if (op == "probe") {
      if (!s.device) throw Error("the worker got a probe job before hello");
      const ProbeResult r = probe_device(*s.device, {req.at("reps").get<int>(),
                                                     req.at("compile_cache_dir").get<std::string>()});
      return {json{{"profile", profile_to_json(r.profile)}}.dump()};
    }
    if (op == "setup") {
      const DeviceInfo& d = open(s, req.at("device").get<int>());
      s.runner.reset();
      s.problem = problem_from_json(req.at("problem"));
      s.timing = timing_from_json(req.at("timing"));
      s.reference_path.clear();
      s.reference = DeviceBuffer();
      s.runner = std::make_unique<Runner>(*s.problem, d, req.at("seed").get<std::uint64_t>(),
                                          req.value("compile_cache_dir", std::string()));
      // Allocated here, with the runner's buffers, so that a problem too large for the device
      // fails the setup (the whole tune) rather than each candidate's measurement.
      s.reference = DeviceBuffer(s.runner->result_bytes());
      return {"{}"};
    }
    if (op == "measure") return {measure(s, req).dump()};
    throw Error(fmt::format("the worker knows no job '{}'", op));
  } catch (const NoGpuError& e) {
    return {json{{"error", "no_gpu"}, {"message", e.what()}}.dump(), true};
  } catch (const CudaError& e) {
    // A failing launch or kernel: for a candidate, a trial; either way this context is suspect.
    if (req.is_object() && req.value("op", "") == "measure")
      return {json{{"status", "launch_error"}, {"message", e.what()}}.dump(), true};
    return {json{{"error", "cuda"}, {"message", e.what()}}.dump(), true};
  } catch (const json::exception& e) {
    return {json{{"error", "error"}, {"message", fmt::format("malformed worker request: {}", e.what())}}.dump()};
  } catch (const Error& e) {
    return {json{{"error", "error"}, {"message", e.what()}}.dump()};
  }
}

int run_worker(int fd) {
  GpuWorker worker;
  serve_jobs(fd, [&worker](const std::string& request) { return worker.handle(request); });
  return 0;
}

}  // namespace tbtune
