#include "tuner/record/trial.hpp"

#include <array>
#include <utility>

#include "tuner/spec/error.hpp"

namespace tbtune {
namespace {

constexpr std::array<std::pair<TrialStatus, const char*>, 7> kNames{{
    {TrialStatus::Ok, "ok"},
    {TrialStatus::CompileError, "compile_error"},
    {TrialStatus::Resources, "resources"},
    {TrialStatus::LaunchError, "launch_error"},
    {TrialStatus::WrongResult, "wrong_result"},
    {TrialStatus::Timeout, "timeout"},
    {TrialStatus::Skipped, "skipped"},
}};

}  // namespace

const char* trial_status_name(TrialStatus s) {
  for (const auto& [status, name] : kNames)
    if (status == s) return name;
  return "unknown";
}

TrialStatus trial_status_from_name(const std::string& name) {
  for (const auto& [status, n] : kNames)
    if (name == n) return status;
  throw Error("unknown trial status '" + name + "'");
}

}  // namespace tbtune
