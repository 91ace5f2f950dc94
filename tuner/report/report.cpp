// `tbtune report`'s figures: model accuracy per strategy, the winners' roofline, and the model
// search against the exhaustive one. Reads the cache only; stored_winner_terms() lives in
// report_terms.cpp because it needs the spec parser.
#include "tuner/report/report.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

namespace tbtune {
namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out(1);
  for (char c : s) {
    if (c == sep)
      out.emplace_back();
    else
      out.back() += c;
  }
  return out;
}

/// The element with the highest count; ties go to the first one seen.
template <class T>
T most_common(const std::vector<T>& items) {
  std::map<T, int> count;
  T best = items.front();
  for (const T& i : items)
    if (++count[i] > count[best]) best = i;
  return best;
}

std::string label(const Winner& w) {
  return fmt::format("{} {} {}", w.stencil_name, w.trial.strategy, params_text(w.trial.params));
}

/// Runs of one search are compared only with runs of the same problem: same key, exact step
/// count (trials are reused only at the same count) and strategy filter (which changes the space).
std::string problem_id(const TuneRecord& r) {
  const WinnerKey& k = r.key;
  return fmt::format("{}|{}|{}|{}x{}x{}|{}|{}|{}", k.stencil_hash, k.device_fingerprint,
                     dtype_name(k.dtype), k.domain[0], k.domain[1], k.domain[2], k.steps_class,
                     r.steps, r.only_strategy);
}

/// Folds one mode's runs of one problem, oldest first (see SearchSummary).
std::optional<SearchSummary> fold(const std::vector<const TuneRecord*>& runs) {
  if (runs.empty()) return std::nullopt;
  std::size_t first = 0;
  for (std::size_t i = 0; i < runs.size(); ++i)
    if (runs[i]->fresh) first = i;
  SearchSummary s;
  for (std::size_t i = first; i < runs.size(); ++i) {
    ++s.runs;
    s.wall_s += runs[i]->wall_s;
    s.last = *runs[i];
    if (runs[i]->complete()) break;
  }
  s.timed = s.last.tally.timed + s.last.tally.reused;
  return s;
}

}  // namespace

std::optional<double> ReportRow::error() const {
  if (!(predicted_pp > 0)) return std::nullopt;
  return measured / predicted_pp - 1;
}

ModelReport model_report(const Cache& cache) {
  ModelReport r;
  std::map<std::string, std::vector<double>> errors;  // by strategy
  for (Winner& w : cache.winners()) {
    ReportKey k;
    for (const Trial& t : cache.trials(w.key)) {
      if (t.status != TrialStatus::Ok) continue;
      ReportRow row{t.strategy, t.params, t.predicted.PP_gcells, t.gcells_median};
      if (const auto e = row.error()) errors[t.strategy].push_back(std::abs(*e));
      k.rows.push_back(std::move(row));
    }
    k.winner = std::move(w);
    r.keys.push_back(std::move(k));
  }
  for (auto& [strategy, e] : errors)
    r.strategies.push_back({strategy, int(e.size()), median(e)});
  return r;
}

double SearchSummary::timed_fraction() const {
  return last.space.feasible > 0 ? double(timed) / last.space.feasible : 0;
}

const TuneRecord& SearchEvidence::problem() const { return model ? model->last : exhaustive->last; }

std::optional<double> SearchEvidence::ratio() const {
  if (!model || !exhaustive || !(model->last.winner_gcells > 0) ||
      !(exhaustive->last.winner_gcells > 0))
    return std::nullopt;
  return model->last.winner_gcells / exhaustive->last.winner_gcells;
}

std::optional<bool> SearchEvidence::meets_within() const {
  const auto r = ratio();
  if (!r || !model->last.complete() || !exhaustive->last.complete()) return std::nullopt;
  return *r >= 1 - SearchCriteria::within;
}

std::optional<bool> SearchEvidence::meets_timed() const {
  if (!model || !model->last.complete()) return std::nullopt;
  return model->timed_fraction() <= SearchCriteria::timed_fraction;
}

std::optional<bool> SearchEvidence::meets_wall() const {
  if (!model || !model->last.complete()) return std::nullopt;
  return model->wall_s <= SearchCriteria::wall_s;
}

std::vector<SearchEvidence> search_evidence(const std::vector<TuneRecord>& tunes) {
  struct Runs {
    std::vector<const TuneRecord*> model, exhaustive;
  };
  std::vector<std::string> order;  // problems by first run
  std::map<std::string, Runs> by_problem;
  for (const TuneRecord& r : tunes) {
    const std::string id = problem_id(r);
    auto [it, added] = by_problem.try_emplace(id);
    if (added) order.push_back(id);
    (r.search.mode == SearchMode::Model ? it->second.model : it->second.exhaustive).push_back(&r);
  }
  std::vector<SearchEvidence> out;
  for (const std::string& id : order) {
    const Runs& runs = by_problem.at(id);
    out.push_back({fold(runs.model), fold(runs.exhaustive)});
  }
  return out;
}

DeviceProfile report_profile(const Cache& cache, const std::string& fingerprint) {
  // "name|sm_XY|NSM|driver D|nvrtc X.Y"; the name itself could hold a '|', so count from the end.
  const auto parts = split(fingerprint, '|');
  std::string name = fingerprint;
  int cc_major = 0, cc_minor = 0, sms = 0;
  if (parts.size() >= 5) {
    const std::size_t n = parts.size();
    name.clear();
    for (std::size_t i = 0; i + 4 < n; ++i) name += (i ? "|" : "") + parts[i];
    const std::string& arch = parts[n - 4];
    if (arch.size() > 4 && arch.rfind("sm_", 0) == 0) {
      const int cc = std::atoi(arch.c_str() + 3);
      cc_major = cc / 10;
      cc_minor = cc % 10;
    }
    sms = std::atoi(parts[n - 3].c_str());
  }
  // The same choice of built-in profile as profile_for() (tuner/tune.cpp) makes for a live GPU.
  std::string base = "h100";
  if (cc_major == 8) base = "a100";
  if (name.find("H200") != std::string::npos) base = "h200";
  DeviceProfile p = *builtin_profile(base);
  // A probed profile, where one is stored, over the built-in one for the fields it lacks.
  if (auto stored = cache.profile(fingerprint, p)) return *stored;
  p.name = base + " (" + name + ")";
  if (cc_major > 0) p.cc_major = cc_major, p.cc_minor = cc_minor;
  if (sms > 0) p.sm_count = sms;
  return p;
}

ReportRoofline report_roofline(const Cache& cache, const ModelReport& report,
                               const TermsFn& terms) {
  ReportRoofline out;
  if (report.keys.empty()) return out;
  std::vector<std::string> devices;
  for (const ReportKey& k : report.keys) devices.push_back(k.winner.key.device_fingerprint);
  out.device_fingerprint = most_common(devices);
  int doubles = 0, floats = 0;
  for (const ReportKey& k : report.keys)
    if (k.winner.key.device_fingerprint == out.device_fingerprint)
      ++(k.winner.key.dtype == DType::Double ? doubles : floats);
  out.dtype = floats > doubles ? DType::Float : DType::Double;
  out.profile = report_profile(cache, out.device_fingerprint);

  std::vector<RooflinePoint> points;
  for (const ReportKey& k : report.keys) {
    const Winner& w = k.winner;
    if (w.key.device_fingerprint != out.device_fingerprint) {
      out.left_out.push_back(label(w) + ": another device (" + w.key.device_fingerprint + ")");
    } else if (w.key.dtype != out.dtype) {
      out.left_out.push_back(label(w) + ": " + dtype_name(w.key.dtype) + ", the chart is " +
                             dtype_name(out.dtype));
    } else if (const auto t = terms(w, out.profile)) {
      points.push_back(roofline_point(label(w), w.trial.gcells_median, *t, w.key.dtype));
    } else {
      out.left_out.push_back(label(w) + ": no model terms (spec text or strategy unavailable)");
    }
  }
  out.drawn = int(points.size());
  out.svg = roofline_svg(out.profile, out.dtype, points);
  return out;
}

}  // namespace tbtune
