#include "tuner/gpu/messages.hpp"

#include <cmath>

#include <fmt/format.h>

#include "tuner/spec/error.hpp"

namespace tbtune {

using nlohmann::json;

json device_to_json(const DeviceInfo& d) {
  return {{"index", d.index}, {"name", d.name}, {"cc_major", d.cc_major}, {"cc_minor", d.cc_minor},
          {"sm_count", d.sm_count}, {"memory_bytes", d.memory_bytes},
          {"driver_version", d.driver_version}, {"smem_per_sm", d.smem_per_sm},
          {"smem_per_block_optin", d.smem_per_block_optin}, {"regs_per_sm", d.regs_per_sm},
          {"max_threads_per_sm", d.max_threads_per_sm}, {"max_blocks_per_sm", d.max_blocks_per_sm},
          {"l2_bytes", d.l2_bytes}, {"clock_ghz", d.clock_ghz}};
}

DeviceInfo device_from_json(const json& j) {
  DeviceInfo d;
  d.index = j.at("index").get<int>();
  d.name = j.at("name").get<std::string>();
  d.cc_major = j.at("cc_major").get<int>();
  d.cc_minor = j.at("cc_minor").get<int>();
  d.sm_count = j.at("sm_count").get<int>();
  d.memory_bytes = j.at("memory_bytes").get<long>();
  d.driver_version = j.at("driver_version").get<int>();
  d.smem_per_sm = j.at("smem_per_sm").get<long>();
  d.smem_per_block_optin = j.at("smem_per_block_optin").get<long>();
  d.regs_per_sm = j.at("regs_per_sm").get<int>();
  d.max_threads_per_sm = j.at("max_threads_per_sm").get<int>();
  d.max_blocks_per_sm = j.at("max_blocks_per_sm").get<int>();
  d.l2_bytes = j.at("l2_bytes").get<long>();
  d.clock_ghz = j.at("clock_ghz").get<double>();
  return d;
}

json measurement_to_json(const Measurement& m) {
  return {{"seconds_median", m.seconds_median}, {"seconds_min", m.seconds_min},
          {"repetitions", m.repetitions}, {"max_error", m.max_error},
          {"registers", m.registers}, {"spill_bytes", m.spill_bytes}, {"smem_bytes", m.smem_bytes}};
}

Measurement measurement_from_json(const json& j) {
  Measurement m;
  m.seconds_median = j.at("seconds_median").get<double>();
  m.seconds_min = j.at("seconds_min").get<double>();
  m.repetitions = j.at("repetitions").get<int>();
  // JSON has no infinity: nlohmann writes null, which stands for "no finite error".
  m.max_error = j.at("max_error").is_null() ? HUGE_VAL : j.at("max_error").get<double>();
  m.registers = j.at("registers").get<int>();
  m.spill_bytes = j.at("spill_bytes").get<int>();
  m.smem_bytes = j.at("smem_bytes").get<long>();
  return m;
}

json timing_to_json(const TimingOptions& t) {
  return {{"min_seconds", t.min_seconds}, {"min_reps", t.min_reps}, {"max_reps", t.max_reps}};
}

TimingOptions timing_from_json(const json& j) {
  return {j.at("min_seconds").get<double>(), j.at("min_reps").get<int>(),
          j.at("max_reps").get<int>()};
}

json problem_to_json(const Problem& p, const std::string& spec_text) {
  return {{"spec_text", spec_text}, {"hash", p.stencil.hash}, {"dtype", dtype_name(p.dtype)},
          {"domain", p.domain}, {"steps", p.steps}};
}

Problem problem_from_json(const json& j) {
  Problem p = make_problem(parse_spec(j.at("spec_text").get<std::string>(), "<tuner>"));
  p.dtype = j.at("dtype").get<std::string>() == "float" ? DType::Float : DType::Double;
  p.domain = j.at("domain").get<std::array<long, 3>>();
  p.steps = j.at("steps").get<long>();
  if (p.stencil.hash != j.at("hash").get<std::string>())
    throw Error(fmt::format("the worker read the spec as stencil {}, the tuner as {}",
                            p.stencil.hash, j.at("hash").get<std::string>()));
  return p;
}

json parse_reply(const std::string& text) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    throw Error(fmt::format("malformed reply from the worker: {}", e.what()));
  }
  if (j.contains("error")) {
    const std::string message = j.value("message", std::string("worker error"));
    if (j["error"] == "no_gpu") throw NoGpuError(message);
    throw Error(message);
  }
  return j;
}

}  // namespace tbtune
