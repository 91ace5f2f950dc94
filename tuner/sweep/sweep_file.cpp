#include "tuner/sweep/sweep_file.hpp"

#include <dirent.h>
#include <glob.h>
#include <sys/stat.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <set>
#include <sstream>

#include "model/device_profile.hpp"
#include "tuner/spec/yaml_text.hpp"

namespace tbtune {
namespace {

namespace fs = std::filesystem;

/// Largest sweep file read: a real one is a few hundred bytes, a spec may be 1 MiB.
constexpr std::size_t kMaxSweepBytes = 1 << 20;

constexpr const char* kTopKeys[] = {"specs", "dtypes", "domains", "steps", "tune", "profile",
                                    "overrides"};
constexpr const char* kOverrideKeys[] = {"specs", "dtypes", "domains", "steps", "tune"};
constexpr const char* kTuneKeys[] = {"search",  "top",     "within",       "max_candidates",
                                     "budget",  "timeout", "allow_spills", "strategy"};

/// Folder entries one spec glob may read, folders it may open and paths it may stat, in all. A
/// sweep names a folder or two of specs (at most kMaxSweepSpecs); `/p*/*/*/*/*/*` walked /proc
/// and, through /proc/N/root, the whole file system, more with every level, and at 100,000
/// entries (stat not counted) `/**/*6*/*/**/*//.` still took 1.5 GB on a GPU machine's file
/// system (the sweep fuzz target's timeout and out-of-memory).
constexpr long kMaxGlobEntries = 20000;

/// What is left of kMaxGlobEntries in the glob running on this thread (its callbacks take no
/// argument of ours); below 0 once it ran out.
thread_local long glob_entries_left = 0;

/// glob(3) of `pattern` within kMaxGlobEntries reads, opens and stats: glob's result, with
/// glob_entries_left below 0 if it ran out (its matches are then incomplete).
int bounded_glob(const char* pattern, glob_t& g) {
  g.gl_opendir = [](const char* dir) -> void* {
    if (--glob_entries_left < 0) return nullptr;
    return ::opendir(dir);
  };
  g.gl_readdir = [](void* dir) -> struct dirent* {
    if (--glob_entries_left < 0) return nullptr;
    return ::readdir(static_cast<DIR*>(dir));
  };
  g.gl_closedir = [](void* dir) { ::closedir(static_cast<DIR*>(dir)); };
  g.gl_stat = [](const char* path, struct stat* st) { return --glob_entries_left < 0 ? -1 : ::stat(path, st); };
  g.gl_lstat = [](const char* path, struct stat* st) { return --glob_entries_left < 0 ? -1 : ::lstat(path, st); };
  glob_entries_left = kMaxGlobEntries;
  return ::glob(pattern, GLOB_ALTDIRFUNC, nullptr, &g);
}

/// Spec files one sweep takes, in all and from one glob. `/*s*/*/*/*/*` matched 54,000 paths in
/// /sys, each then checked with stat(2), and a list naming such a glob twice was compared pair
/// by pair (the sweep fuzz target's timeout).
constexpr std::size_t kMaxSweepSpecs = 10000;

std::string too_many_specs() {
  return "more than " + std::to_string(kMaxSweepSpecs) + " files; a sweep takes at most that many specs";
}

/// A spec path or glob: at most this many bytes and folder levels ('/', a run of them counting
/// once). glob(3) calls itself once per level of a pattern with wildcards, with a copy of the
/// pattern on the stack each time: 3,000 slashes overflowed the stack (the sweep fuzz target).
constexpr std::size_t kMaxSpecPathBytes = 4096;
constexpr long kMaxSpecPathLevels = 64;

std::string shown(const YAML::Node& n) {
  if (n.IsScalar()) return "'" + printable(n.Scalar()) + "'";
  if (n.IsSequence()) return "a list";
  if (n.IsMap()) return "a map";
  return "nothing";
}

/// Validation of one sweep file; every failure is a SweepError at a node's mark.
class Reader {
 public:
  explicit Reader(std::string path) : path_(std::move(path)), dir_(fs::path(path_).parent_path()) {}

  [[noreturn]] void fail(const YAML::Mark& m, const std::string& message) const {
    if (m.is_null()) throw SweepError(path_, 1, 1, message);
    throw SweepError(path_, m.line + 1, m.column + 1, message);
  }

  SweepFile read(const YAML::Node& root) {
    if (!root.IsDefined() || root.IsNull()) throw SweepError(path_, 1, 1, "file is empty");
    if (!root.IsMap()) fail(root.Mark(), "the top level must be a map (specs: ..., dtypes: ...), got " + shown(root));
    check_keys(root, kTopKeys, "the sweep");
    if (!root["specs"]) fail(root.Mark(), "missing required key 'specs' (a list of spec paths or globs)");
    SweepFile f;
    f.path = path_;
    f.specs = read_specs(root["specs"]);
    f.axes.dtypes = read_dtypes(root["dtypes"]).value_or(std::vector<DType>{});
    f.axes.domains = read_domains(root["domains"]).value_or(std::vector<std::vector<long>>{});
    f.axes.steps = read_steps(root["steps"]).value_or(std::vector<long>{});
    f.axes.tune = read_tune(root["tune"]);
    if (const YAML::Node p = root["profile"]) {
      const auto names = builtin_profile_names();
      if (!p.IsScalar() || std::find(names.begin(), names.end(), p.Scalar()) == names.end())
        fail(p.Mark(), "'profile' must name a built-in device profile (a100, h100, h200), got " + shown(p));
      f.profile = p.Scalar();
    }
    if (const YAML::Node o = root["overrides"]) {
      if (!o.IsSequence()) fail(o.Mark(), "'overrides' must be a list of maps {specs: ..., ...}, got " + shown(o));
      for (const YAML::Node& item : o) f.overrides.push_back(read_override(item, f.specs));
    }
    return f;
  }

 private:
  template <std::size_t N>
  void check_keys(const YAML::Node& map, const char* const (&known)[N], const std::string& where) const {
    std::set<std::string> seen;
    for (auto it = map.begin(); it != map.end(); ++it) {
      // A copy: `it->first` is a member of a proxy that dies at the end of this statement.
      const YAML::Node k = it->first;
      if (!k.IsScalar()) fail(k.Mark(), "keys must be plain names, got " + shown(k));
      if (!seen.insert(k.Scalar()).second) fail(k.Mark(), "duplicate key " + shown(k));
      if (std::find_if(std::begin(known), std::end(known),
                       [&](const char* s) { return k.Scalar() == s; }) != std::end(known))
        continue;
      std::string list;
      for (const char* s : known) list += std::string(list.empty() ? "" : ", ") + s;
      fail(k.Mark(), "unknown key " + shown(k) + " in " + where + " (expected one of: " + list + ")");
    }
  }

  /// One path or glob, relative to the sweep file's folder: the files it names, sorted.
  std::vector<std::string> resolve(const YAML::Node& n) const {
    if (!n.IsScalar() || n.Scalar().empty()) fail(n.Mark(), "a spec must be a path or a glob, got " + shown(n));
    std::string spec;  // a run of '/' as one: glob(3) takes each '/' as a level
    for (const char c : n.Scalar())
      if (c != '/' || spec.empty() || spec.back() != '/') spec += c;
    if (spec.size() > kMaxSpecPathBytes || std::count(spec.begin(), spec.end(), '/') > kMaxSpecPathLevels)
      fail(n.Mark(), "a spec path or glob has at most " + std::to_string(kMaxSpecPathBytes) + " bytes and " +
                         std::to_string(kMaxSpecPathLevels) + " folder levels");
    const fs::path p = fs::path(spec).is_absolute() ? fs::path(spec) : dir_ / spec;
    glob_t g{};
    const int rc = bounded_glob(p.c_str(), g);
    std::vector<std::string> out;
    for (std::size_t i = 0; rc == 0 && i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
    ::globfree(&g);
    if (glob_entries_left < 0)
      fail(n.Mark(), shown(n) + " reads or checks more than " + std::to_string(kMaxGlobEntries) +
                         " folder entries; name the folder that holds the specs");
    if (out.size() > kMaxSweepSpecs) fail(n.Mark(), shown(n) + " matches " + too_many_specs());
    // Without an error_code, a match whose status cannot be read (a symlink loop, /proc/1/cwd)
    // threw std::filesystem::filesystem_error out of load_sweep. Such a match is no spec file.
    out.erase(std::remove_if(out.begin(), out.end(),
                             [](const std::string& s) {
                               std::error_code ec;
                               return !fs::is_regular_file(s, ec);
                             }),
              out.end());
    if (out.empty()) fail(n.Mark(), shown(n) + " matches no file (paths are relative to the sweep file)");
    std::sort(out.begin(), out.end());
    return out;
  }

  std::vector<std::string> read_specs(const YAML::Node& n) const {
    std::vector<std::string> out;
    if (n.IsScalar()) return resolve(n);
    if (!n.IsSequence() || n.size() == 0) fail(n.Mark(), "'specs' must be a path, a glob or a non-empty list of them, got " + shown(n));
    std::set<std::string> seen;
    for (const YAML::Node& item : n)
      for (std::string& s : resolve(item)) {
        if (!seen.insert(s).second) continue;
        out.push_back(std::move(s));
        if (out.size() > kMaxSweepSpecs) fail(item.Mark(), "the specs up to here match " + too_many_specs());
      }
    return out;
  }

  /// A non-empty list, or (for convenience) one value standing for a list of one.
  std::vector<YAML::Node> items(const YAML::Node& n, const std::string& key) const {
    if (n.IsScalar()) return {n};
    if (!n.IsSequence() || n.size() == 0) fail(n.Mark(), "'" + key + "' must be a non-empty list, got " + shown(n));
    return {n.begin(), n.end()};
  }

  static bool to_long(const YAML::Node& n, long& out) {
    if (!n.IsScalar()) return false;
    const std::string& s = n.Scalar();
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && ptr == s.data() + s.size() && !s.empty();
  }

  static bool to_double(const YAML::Node& n, double& out) {
    if (!n.IsScalar()) return false;
    const std::string& s = n.Scalar();
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && ptr == s.data() + s.size() && !s.empty() && std::isfinite(out);
  }

  std::optional<std::vector<DType>> read_dtypes(const YAML::Node& n) const {
    if (!n) return std::nullopt;
    std::vector<DType> out;
    for (const YAML::Node& d : items(n, "dtypes")) {
      if (!d.IsScalar() || (d.Scalar() != "float" && d.Scalar() != "double"))
        fail(d.Mark(), "a dtype must be float or double, got " + shown(d));
      const DType t = d.Scalar() == "float" ? DType::Float : DType::Double;
      if (std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
    }
    return out;
  }

  std::optional<std::vector<std::vector<long>>> read_domains(const YAML::Node& n) const {
    if (!n) return std::nullopt;
    if (!n.IsSequence() || n.size() == 0)
      fail(n.Mark(), "'domains' must be a non-empty list of extents lists, e.g. [[4096, 4096], [256, 256, 256]]");
    std::vector<std::vector<long>> out;
    for (const YAML::Node& d : n) {
      if (!d.IsSequence() || (d.size() != 2 && d.size() != 3))
        fail(d.Mark(), "a domain must list 2 or 3 extents (nx, ny[, nz]), got " + shown(d));
      // The spec's limits (radius 1 here: each spec's own radius is checked when the problems
      // are made).
      std::vector<long> extents;
      double cells = 1;
      for (const YAML::Node& e : d) {
        long v = 0;
        if (!to_long(e, v)) fail(e.Mark(), "a domain extent must be an integer, got " + shown(e));
        if (const std::string why = extent_problem(v, 1); !why.empty()) fail(e.Mark(), why);
        cells *= double(v);
        extents.push_back(v);
      }
      if (const std::string why = cells_problem(cells); !why.empty()) fail(d.Mark(), "a domain is " + why);
      if (std::find(out.begin(), out.end(), extents) == out.end()) out.push_back(std::move(extents));
    }
    return out;
  }

  std::optional<std::vector<long>> read_steps(const YAML::Node& n) const {
    if (!n) return std::nullopt;
    std::vector<long> out;
    for (const YAML::Node& s : items(n, "steps")) {
      long v = 0;
      if (!to_long(s, v) || v < 1) fail(s.Mark(), "a step count must be an integer >= 1, got " + shown(s));
      if (const std::string why = steps_problem(v); !why.empty()) fail(s.Mark(), "a step count " + why);
      if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
    }
    return out;
  }

  SweepTuneOptions read_tune(const YAML::Node& n) const {
    SweepTuneOptions t;
    if (!n) return t;
    if (!n.IsMap()) fail(n.Mark(), "'tune' must be a map of tune options (search, top, ...), got " + shown(n));
    check_keys(n, kTuneKeys, "'tune'");
    auto number = [&](const char* key, double lo, double hi) -> std::optional<double> {
      const YAML::Node v = n[key];
      if (!v) return std::nullopt;
      double d = 0;
      if (!to_double(v, d) || d < lo || d > hi)
        fail(v.Mark(), fmt_range(key, lo, hi) + ", got " + shown(v));
      return d;
    };
    auto integer = [&](const char* key) -> std::optional<int> {
      const YAML::Node v = n[key];
      if (!v) return std::nullopt;
      long d = 0;
      if (!to_long(v, d) || d < 0 || d > 100000) fail(v.Mark(), std::string("'") + key + "' must be an integer from 0 to 100000, got " + shown(v));
      return int(d);
    };
    if (const YAML::Node s = n["search"]) {
      if (!s.IsScalar() || (s.Scalar() != "model" && s.Scalar() != "exhaustive"))
        fail(s.Mark(), "'search' must be model or exhaustive, got " + shown(s));
      t.search = s.Scalar() == "model" ? SearchMode::Model : SearchMode::Exhaustive;
    }
    t.top = integer("top");
    t.max_candidates = integer("max_candidates");
    if (auto w = number("within", 0, 100)) t.within = *w / 100;
    t.budget_s = number("budget", 0, 1e9);
    t.timeout_s = number("timeout", 0.1, 1e6);
    if (const YAML::Node a = n["allow_spills"]) {
      if (!a.IsScalar() || (a.Scalar() != "true" && a.Scalar() != "false"))
        fail(a.Mark(), "'allow_spills' must be true or false, got " + shown(a));
      t.allow_spills = a.Scalar() == "true";
    }
    if (const YAML::Node s = n["strategy"]) {
      if (!s.IsScalar() || s.Scalar().empty()) fail(s.Mark(), "'strategy' must be a strategy name, got " + shown(s));
      t.strategy = s.Scalar();
    }
    return t;
  }

  static std::string fmt_range(const char* key, double lo, double hi) {
    std::ostringstream s;
    s << "'" << key << "' must be a number from " << lo << " to " << hi;
    return s.str();
  }

  SweepOverride read_override(const YAML::Node& n, const std::vector<std::string>& sweep_specs) const {
    if (!n.IsMap()) fail(n.Mark(), "each override must be a map {specs: ..., dtypes: ..., ...}, got " + shown(n));
    check_keys(n, kOverrideKeys, "an override");
    if (!n["specs"]) fail(n.Mark(), "an override needs 'specs': the specs (paths or globs) it applies to");
    SweepOverride o;
    o.specs = read_specs(n["specs"]);
    const std::set<std::string> known(sweep_specs.begin(), sweep_specs.end());
    for (const std::string& s : o.specs)
      if (!known.count(s))
        fail(n["specs"].Mark(), "override names '" + printable(s) + "', which is not among the sweep's specs");
    o.dtypes = read_dtypes(n["dtypes"]);
    o.domains = read_domains(n["domains"]);
    o.steps = read_steps(n["steps"]);
    o.tune = read_tune(n["tune"]);
    return o;
  }

  std::string path_;
  fs::path dir_;
};

}  // namespace

SweepTuneOptions SweepTuneOptions::overlaid(const SweepTuneOptions& more) const {
  SweepTuneOptions t = *this;
  if (more.search) t.search = more.search;
  if (more.top) t.top = more.top;
  if (more.within) t.within = more.within;
  if (more.max_candidates) t.max_candidates = more.max_candidates;
  if (more.budget_s) t.budget_s = more.budget_s;
  if (more.timeout_s) t.timeout_s = more.timeout_s;
  if (more.allow_spills) t.allow_spills = more.allow_spills;
  if (more.strategy) t.strategy = more.strategy;
  return t;
}

SweepFile load_sweep(const std::string& path) {
  // The same rules as a spec's file: bounded, text only, one document.
  const std::string text = read_bounded(path, kMaxSweepBytes, "sweep file");
  if (const auto bad = find_control_byte(text, "sweep file")) throw SweepError(path, bad->line, bad->col, bad->message);
  try {
    const YAML::Node root = YAML::Load(text);
    if (const auto second = find_second_document(text, "sweep file"))
      throw SweepError(path, second->line, second->col, second->message);
    return Reader(path).read(root);
  } catch (const YAML::Exception& e) {
    if (e.mark.is_null()) throw SweepError(path, 1, 1, "invalid YAML: " + e.msg);
    throw SweepError(path, e.mark.line + 1, e.mark.column + 1, "invalid YAML: " + e.msg);
  }
}

}  // namespace tbtune
