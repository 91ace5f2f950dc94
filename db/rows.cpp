#include "db/rows.hpp"

#include <array>
#include <charconv>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include "tuner/spec/error.hpp"

namespace tbtune::db {

// The cache keeps its own text forms of params and bottleneck instead of calling
// params_text()/bottleneck_name(): what is on disk must not change when those (made for
// humans) do, and reading them back needs the inverse anyway.

std::string format_params(const Params& params) {
  std::string out;
  for (const auto& [k, v] : params) {
    if (!out.empty()) out += ',';
    out += fmt::format("{}={}", k, v);
  }
  return out;
}

namespace {

[[noreturn]] void corrupt(const std::string& path, const std::string& what) {
  throw CacheError(fmt::format("cache '{}': {}", path, what), SQLITE_CORRUPT);
}

Params parse_params_text(const std::string& text, const std::string& path) {
  Params out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find(',', pos);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(pos, end - pos);
    const std::size_t eq = item.find('=');
    int value = 0;
    const char* first = item.data() + (eq == std::string::npos ? 0 : eq + 1);
    const char* last = item.data() + item.size();
    const auto [ptr, ec] = std::from_chars(first, last, value);
    if (eq == std::string::npos || eq == 0 || ec != std::errc() || ptr != last || first == last)
      corrupt(path, fmt::format("malformed params '{}' in a stored trial", text));
    out[item.substr(0, eq)] = value;
    pos = end + 1;
  }
  return out;
}

constexpr std::array<std::pair<Bottleneck, const char*>, 3> kBottlenecks{{
    {Bottleneck::GlobalMemory, "gm"},
    {Bottleneck::SharedMemory, "sm"},
    {Bottleneck::Compute, "cmp"},
}};

const char* bottleneck_text(Bottleneck b) {
  for (const auto& [value, name] : kBottlenecks)
    if (value == b) return name;
  return "gm";
}

Bottleneck bottleneck_from_text(const std::string& text, const std::string& path) {
  for (const auto& [value, name] : kBottlenecks)
    if (text == name) return value;
  corrupt(path, fmt::format("unknown bottleneck '{}' in a stored trial", text));
}

DType dtype_from_text(const std::string& text, const std::string& path) {
  if (text == dtype_name(DType::Float)) return DType::Float;
  if (text == dtype_name(DType::Double)) return DType::Double;
  corrupt(path, fmt::format("unknown dtype '{}' in a stored key", text));
}

constexpr std::array<std::pair<SearchMode, const char*>, 2> kSearchModes{{
    {SearchMode::Model, "model"},
    {SearchMode::Exhaustive, "exhaustive"},
}};

const char* search_text(SearchMode m) {
  for (const auto& [value, name] : kSearchModes)
    if (value == m) return name;
  return "model";
}

SearchMode search_from_text(const std::string& text, const std::string& path) {
  for (const auto& [value, name] : kSearchModes)
    if (text == name) return value;
  corrupt(path, fmt::format("unknown search mode '{}' in a stored tune", text));
}

TrialStatus status_from_text(const std::string& text, const std::string& path) {
  try {
    return trial_status_from_name(text);
  } catch (const Error&) {
    corrupt(path, fmt::format("unknown trial status '{}' in a stored trial", text));
  }
}

}  // namespace

std::string placeholders(int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += i ? ", ?" : "?";
  return out;
}

void bind_key(Statement& s, const WinnerKey& k) {
  s.bind(k.stencil_hash).bind(k.device_fingerprint).bind(dtype_name(k.dtype));
  s.bind(k.domain[0]).bind(k.domain[1]).bind(k.domain[2]).bind(k.steps_class);
}

WinnerKey read_key(const Statement& s, int c, const std::string& path) {
  WinnerKey k;
  k.stencil_hash = s.text(c);
  k.device_fingerprint = s.text(c + 1);
  k.dtype = dtype_from_text(s.text(c + 2), path);
  k.domain = {s.int64(c + 3), s.int64(c + 4), s.int64(c + 5)};
  k.steps_class = s.int32(c + 6);
  return k;
}

void bind_trial(Statement& s, const Trial& t) {
  const Prediction& p = t.predicted;
  s.bind(t.strategy).bind(format_params(t.params));
  s.bind(p.P_gcells).bind(p.V).bind(p.PP_gcells).bind(bottleneck_text(p.bottleneck));
  s.bind(p.fits ? 1 : 0).bind(trial_status_name(t.status));
  s.bind(t.gcells_median).bind(t.gcells_best).bind(t.seconds_median).bind(t.repetitions);
  s.bind(t.max_rel_error).bind(t.registers).bind(t.spill_bytes).bind(t.smem_bytes);
}

Trial read_trial(const Statement& s, int c, const std::string& path) {
  Trial t;
  t.strategy = s.text(c);
  t.params = parse_params_text(s.text(c + 1), path);
  t.predicted.P_gcells = s.real(c + 2);
  t.predicted.V = s.real(c + 3);
  t.predicted.PP_gcells = s.real(c + 4);
  t.predicted.bottleneck = bottleneck_from_text(s.text(c + 5), path);
  t.predicted.fits = s.int32(c + 6) != 0;
  t.status = status_from_text(s.text(c + 7), path);
  t.gcells_median = s.real(c + 8);
  t.gcells_best = s.real(c + 9);
  t.seconds_median = s.real(c + 10);
  t.repetitions = s.int32(c + 11);
  t.max_rel_error = s.real(c + 12);
  t.registers = s.int32(c + 13);
  t.spill_bytes = s.int32(c + 14);
  t.smem_bytes = s.int64(c + 15);
  return t;
}

void bind_tune(Statement& s, const TuneRecord& r) {
  bind_key(s, r.key);
  s.bind(r.steps).bind(r.stencil_name).bind(r.only_strategy).bind(search_text(r.search.mode));
  s.bind(r.search.top).bind(r.search.within).bind(r.search.max_candidates).bind(r.budget_s);
  s.bind(r.fresh ? 1 : 0).bind(r.allow_spills ? 1 : 0);
  s.bind(r.space.candidates).bind(r.space.feasible).bind(r.selected);
  const SearchTally& t = r.tally;
  s.bind(t.timed).bind(t.reused).bind(t.pruned).bind(t.compile_errors).bind(t.not_run);
  s.bind(r.winner_strategy).bind(format_params(r.winner_params)).bind(r.winner_gcells);
  s.bind(r.interrupted ? 1 : 0).bind(r.out_of_budget ? 1 : 0).bind(r.wall_s).bind(r.tool_version);
}

TuneRecord read_tune(const Statement& s, int c, const std::string& path) {
  TuneRecord r;
  r.key = read_key(s, c, path);
  c += kKeyCount;
  r.steps = s.int64(c);
  r.stencil_name = s.text(c + 1);
  r.only_strategy = s.text(c + 2);
  r.search.mode = search_from_text(s.text(c + 3), path);
  r.search.top = s.int32(c + 4);
  r.search.within = s.real(c + 5);
  r.search.max_candidates = s.int32(c + 6);
  r.budget_s = s.real(c + 7);
  r.fresh = s.int32(c + 8) != 0;
  r.allow_spills = s.int32(c + 9) != 0;
  r.space = {s.int32(c + 10), s.int32(c + 11)};
  r.selected = s.int32(c + 12);
  r.tally = {s.int32(c + 13), s.int32(c + 14), s.int32(c + 15), s.int32(c + 16), s.int32(c + 17)};
  r.winner_strategy = s.text(c + 18);
  r.winner_params = parse_params_text(s.text(c + 19), path);
  r.winner_gcells = s.real(c + 20);
  r.interrupted = s.int32(c + 21) != 0;
  r.out_of_budget = s.int32(c + 22) != 0;
  r.wall_s = s.real(c + 23);
  r.tool_version = s.text(c + 24);
  r.created_at = s.text(c + kTuneCount);
  return r;
}

}  // namespace tbtune::db
