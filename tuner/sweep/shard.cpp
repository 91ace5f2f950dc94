#include "tuner/sweep/shard.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <numeric>

#include <fmt/format.h>

#include "tuner/spec/error.hpp"

namespace tbtune {
namespace {

std::optional<long> to_long(const std::string& s) {
  long v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

}  // namespace

ShardSpec parse_shard(const std::string& text) {
  const std::size_t slash = text.find('/');
  const auto i = slash == std::string::npos ? std::nullopt : to_long(text.substr(0, slash));
  const auto n = slash == std::string::npos ? std::nullopt : to_long(text.substr(slash + 1));
  if (!i || !n || *n < 1 || *n > 100000)
    throw UsageError(fmt::format("--shard '{}': expected I/N with 0 <= I < N, e.g. 0/4", text));
  if (*i < 0 || *i >= *n)
    throw UsageError(fmt::format("--shard '{}': shard index {} is out of range: it must be 0 to {}",
                                 text, *i, *n - 1));
  return ShardSpec{int(*i), int(*n), *i, "", "--shard"};
}

std::optional<std::string> process_env(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

std::optional<ShardSpec> shard_from_slurm(const EnvFn& env) {
  const auto id_text = env("SLURM_ARRAY_TASK_ID");
  if (!id_text) return std::nullopt;
  auto number = [&](const char* name) -> std::optional<long> {
    const auto v = env(name);
    if (!v) return std::nullopt;
    const auto n = to_long(*v);
    if (!n) throw UsageError(fmt::format("{}='{}' is not an integer", name, *v));
    return n;
  };
  const long id = *number("SLURM_ARRAY_TASK_ID");
  const long min = number("SLURM_ARRAY_TASK_MIN").value_or(0);
  const long step = number("SLURM_ARRAY_TASK_STEP").value_or(1);
  std::optional<long> count = number("SLURM_ARRAY_TASK_COUNT");
  if (const auto max = number("SLURM_ARRAY_TASK_MAX"); !count && max && step > 0)
    count = (*max - min) / step + 1;
  if (!count)
    throw UsageError("SLURM_ARRAY_TASK_ID is set but neither SLURM_ARRAY_TASK_COUNT nor "
                     "SLURM_ARRAY_TASK_MAX: give --shard I/N");
  if (step < 1 || id < min || (id - min) % step != 0 || (id - min) / step >= *count)
    throw UsageError(fmt::format("the Slurm array task {} is not in an evenly stepped range (min {}, "
                                 "step {}, count {}): submit --array=A-B[:S], or give --shard I/N",
                                 id, min, step, *count));
  ShardSpec s;
  s.index = int((id - min) / step);
  s.count = int(*count);
  s.task_id = id;
  s.job_id = env("SLURM_ARRAY_JOB_ID").value_or("");
  s.source = "SLURM_ARRAY_*";
  return s;
}

std::vector<int> shard_problems(const std::vector<double>& costs, int index, int count) {
  std::vector<int> order(costs.size());
  std::iota(order.begin(), order.end(), 0);
  // Stable on index, so equal costs keep problem order: the same deal on every node.
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return costs[std::size_t(a)] > costs[std::size_t(b)]; });
  std::vector<double> load(std::size_t(count), 0.0);
  std::vector<int> mine;
  for (int p : order) {
    const auto least = std::min_element(load.begin(), load.end()) - load.begin();
    load[std::size_t(least)] += costs[std::size_t(p)];
    if (least == index) mine.push_back(p);
  }
  std::sort(mine.begin(), mine.end());
  return mine;
}

std::string task_path(const std::string& pattern, const ShardSpec& shard) {
  std::string out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%') {
      out.push_back(pattern[i]);
      continue;
    }
    const char c = i + 1 < pattern.size() ? pattern[++i] : '\0';
    if (c == 'a') out += std::to_string(shard.task_id);
    else if (c == 'A') out += shard.job_id.empty() ? "local" : shard.job_id;
    else if (c == '%') out.push_back('%');
    else throw UsageError(fmt::format("'{}': unknown placeholder '%{}' (use %a for the task id, %A for the array job id, %% for %)", pattern, c));
  }
  return out;
}

std::vector<long> parse_task_ids(const std::string& text) {
  const std::size_t dash = text.find('-'), colon = text.find(':');
  std::optional<long> first = 0, last, step = 1;
  if (dash == std::string::npos) {
    const auto n = to_long(text);
    if (n && *n >= 1) last = *n - 1;
  } else {
    first = to_long(text.substr(0, dash));
    last = to_long(text.substr(dash + 1, colon == std::string::npos ? std::string::npos : colon - dash - 1));
    if (colon != std::string::npos) step = to_long(text.substr(colon + 1));
  }
  if (!first || !last || !step || *first < 0 || *last < *first || *step < 1 || (*last - *first) / *step >= 100000)
    throw UsageError(fmt::format("--expect '{}': expected N (task ids 0 to N-1), A-B or A-B:S", text));
  std::vector<long> ids;
  for (long id = *first; id <= *last; id += *step) ids.push_back(id);
  return ids;
}

}  // namespace tbtune
