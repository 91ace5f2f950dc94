#include "tuner/search/worker_measurer.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "model/profile_json.hpp"
#include "tuner/gpu/messages.hpp"
#include "tuner/spec/error.hpp"

namespace tbtune {

using nlohmann::json;

WorkerMeasurer::WorkerMeasurer(Launcher launcher, WorkerOptions options)
    : supervisor_(std::move(launcher)), options_(options) {}

json WorkerMeasurer::setup_call(const json& request) {
  const double limit = std::max(options_.setup_timeout_s, options_.timeout_s);
  const CallResult r = supervisor_.call(request.dump(), limit);
  const std::string op = request.at("op").get<std::string>();
  switch (r.kind) {
    case CallResult::Kind::Reply:
      return parse_reply(r.text);
    case CallResult::Kind::Failure:
      throw Error(fmt::format("the GPU worker failed at '{}': {}", op, r.text));
    case CallResult::Kind::Died:
      throw Error(fmt::format("the GPU worker {} at '{}'", r.text, op));
    case CallResult::Kind::TimedOut:
      throw Error(fmt::format("the GPU worker gave {} at '{}'", r.text, op));
  }
  throw Error("unreachable");
}

void WorkerMeasurer::ensure_ready() {
  (void)supervisor_.ensure_started();
  if (supervisor_.starts() == ready_start_) return;
  ready_start_ = supervisor_.starts();
  hello_ = setup_call({{"op", "hello"}, {"device", options_.device}});
  if (!setup_request_.empty()) (void)setup_call(json::parse(setup_request_));
}

DeviceInfo WorkerMeasurer::device() {
  ensure_ready();
  return device_from_json(hello_.at("device"));
}

DeviceProfile WorkerMeasurer::probe(int repetitions, const std::string& compile_cache_dir) {
  ensure_ready();
  const json r = setup_call(
      {{"op", "probe"}, {"reps", repetitions}, {"compile_cache_dir", compile_cache_dir}});
  return profile_from_json(r.at("profile"));
}

void WorkerMeasurer::set_problem(const Problem& problem, const std::string& spec_text,
                                 std::uint64_t seed, const TimingOptions& timing,
                                 const std::string& compile_cache_dir) {
  const json request{{"op", "setup"}, {"device", options_.device},
                     {"problem", problem_to_json(problem, spec_text)}, {"seed", seed},
                     {"timing", timing_to_json(timing)}, {"compile_cache_dir", compile_cache_dir}};
  setup_request_ = request.dump();
  if (supervisor_.running() && supervisor_.starts() == ready_start_) (void)setup_call(request);
}

MeasureOutcome WorkerMeasurer::measure(const MeasureJob& job) {
  ensure_ready();
  json params = json::object();
  for (const auto& [k, v] : job.candidate->params) params[k] = v;
  const json request{{"op", "measure"}, {"index", job.index},
                     {"strategy", job.candidate->strategy->name()}, {"params", params},
                     {"cubin", job.cubin_path}, {"log", job.ptxas_log},
                     {"reference", job.is_reference ? "" : job.reference_path},
                     {"save_output", job.is_reference ? job.reference_path : ""}};
  const CallResult r = supervisor_.call(request.dump(), options_.timeout_s);
  MeasureOutcome out;
  switch (r.kind) {
    case CallResult::Kind::Reply: {
      json j;
      try {
        j = parse_reply(r.text);
      } catch (const NoGpuError&) {
        throw;
      } catch (const Error& e) {
        // The worker could not even try this candidate (say, its image is unreadable).
        out.status = TrialStatus::LaunchError;
        out.message = e.what();
        return out;
      }
      out.status = trial_status_from_name(j.at("status").get<std::string>());
      out.message = j.value("message", std::string());
      if (out.status == TrialStatus::Ok) out.measurement = measurement_from_json(j.at("measurement"));
      if (!supervisor_.running()) out.message += " (the worker was restarted)";
      return out;
    }
    case CallResult::Kind::Failure:
      out.status = TrialStatus::LaunchError;
      out.message = "the GPU worker failed: " + r.text;
      return out;
    case CallResult::Kind::Died:
      out.status = TrialStatus::LaunchError;
      out.message = fmt::format("the GPU worker {} while running this candidate; restarted it", r.text);
      return out;
    case CallResult::Kind::TimedOut:
      out.status = TrialStatus::Timeout;
      out.message = fmt::format("{} (--timeout); the GPU worker was killed and restarted", r.text);
      return out;
  }
  throw Error("unreachable");
}

}  // namespace tbtune
