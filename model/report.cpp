// `tbtune report`'s figures: model accuracy per strategy and the winners' roofline. Reads the
// cache only; stored_winner_terms() lives in report_terms.cpp because it needs the spec parser.
#include "model/report.hpp"

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

DeviceProfile report_profile(const Cache& cache, const std::string& fingerprint) {
  if (auto stored = cache.profile(fingerprint)) return *stored;
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
