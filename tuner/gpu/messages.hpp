#pragma once
/// @file messages.hpp
/// The JSON payloads the tuner and its GPU worker exchange (framing: tuner/protocol.hpp).
///
/// Requests carry "op":
///  - "hello" {device}: open the device; reply {"device": DEVICE}
///  - "probe" {reps, compile_cache_dir}: run the microbenchmarks; reply {"profile": PROFILE}
///  - "setup" {problem: PROBLEM, seed, timing}: upload the input; reply {}
///  - "measure" {index, strategy, params, cubin (a file), log (ptxas' report), reference (a file
///    with the naive kernel's output, or ""), save_output (a file to write this run's output
///    to, or "")}: reply {"status": "ok"|"resources"|"launch_error", "message", "measurement"}
/// Any reply may instead be {"error": "no_gpu"|"error", "message"}.
#include <nlohmann/json.hpp>

#include <string>

#include "tuner/gpu/gpu.hpp"
#include "tuner/gpu/runner.hpp"
#include "tuner/spec/stencil.hpp"

namespace tbtune {

[[nodiscard]] nlohmann::json device_to_json(const DeviceInfo& d);
[[nodiscard]] DeviceInfo device_from_json(const nlohmann::json& j);

[[nodiscard]] nlohmann::json measurement_to_json(const Measurement& m);
[[nodiscard]] Measurement measurement_from_json(const nlohmann::json& j);

[[nodiscard]] nlohmann::json timing_to_json(const TimingOptions& t);
[[nodiscard]] TimingOptions timing_from_json(const nlohmann::json& j);

/// A problem travels as its spec text plus the dtype, domain and steps that override the spec;
/// the worker parses it again, so nothing but the spec format crosses the process boundary.
[[nodiscard]] nlohmann::json problem_to_json(const Problem& p, const std::string& spec_text);
/// Throws Error when the text no longer gives the same stencil (its hash differs).
[[nodiscard]] Problem problem_from_json(const nlohmann::json& j);

/// Parses a reply, turning {"error": ...} into the matching exception (NoGpuError, Error).
[[nodiscard]] nlohmann::json parse_reply(const std::string& text);

}  // namespace tbtune
