#include "tuner/codegen/strategy.hpp"

#include <charconv>

#include "tuner/codegen/strategies/strategies.hpp"
#include "tuner/spec/error.hpp"

namespace tbtune {

std::string rest_kernel_name(int depth) { return "tb_rest_" + std::to_string(depth); }

std::string params_text(const Params& p) {
  std::string out;
  for (const auto& [k, v] : p) {
    if (!out.empty()) out += ',';
    out += k + "=" + std::to_string(v);
  }
  return out;
}

Params parse_params(const std::vector<std::string>& items) {
  Params p;
  for (const std::string& item : items) {
    const auto eq = item.find('=');
    int value = 0;
    const char* first = item.data() + (eq == std::string::npos ? 0 : eq + 1);
    const char* last = item.data() + item.size();
    auto [ptr, ec] = std::from_chars(first, last, value);
    if (eq == std::string::npos || eq == 0 || ec != std::errc() || ptr != last)
      throw UsageError("--param '" + item + "': expected NAME=INTEGER, for example t=4");
    p[item.substr(0, eq)] = value;
  }
  return p;
}

const std::vector<std::unique_ptr<Strategy>>& strategies() {
  static const std::vector<std::unique_ptr<Strategy>> all = [] {
    std::vector<std::unique_ptr<Strategy>> v;
    v.push_back(make_naive_strategy());
    v.push_back(make_stream_strategy());
    v.push_back(make_cmq2d_strategy());
    v.push_back(make_wpipe2d_strategy());
    v.push_back(make_smtile3d_strategy());
    v.push_back(make_devtile3d_strategy());
    v.push_back(make_wpipe3d_strategy());
    return v;
  }();
  return all;
}

const Strategy* find_strategy(const std::string& name) {
  for (const auto& s : strategies())
    if (s->name() == name) return s.get();
  return nullptr;
}

}  // namespace tbtune
