#include "tuner/spec/yaml_text.hpp"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tuner/spec/error.hpp"

namespace tbtune {
namespace {

/// Counts document starts without building any node. yaml-cpp's LoadAll loops for ever on some
/// malformed input (it keeps starting documents without consuming text), so the parser is asked
/// for two documents at most.
class DocumentCounter : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark& mark) override {
    if (++documents_ == 2) second_ = mark;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}

  int documents_ = 0;
  YAML::Mark second_;
};

}  // namespace

std::string read_bounded(const std::string& path, std::size_t max_bytes, std::string_view what) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw Error("cannot read '" + path + "': " + std::strerror(EISDIR));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read '" + path + "': " + std::strerror(errno));
  // One byte past the limit, never more; in chunks, so that a small file (the usual case) does
  // not cost a zeroed buffer of the limit's size.
  constexpr std::size_t kChunk = 64 * 1024;
  std::string text;
  while (text.size() <= max_bytes) {
    const std::size_t have = text.size();
    text.resize(have + std::min(kChunk, max_bytes + 1 - have));
    in.read(text.data() + have, static_cast<std::streamsize>(text.size() - have));
    text.resize(have + static_cast<std::size_t>(in.gcount()));
    if (!in) break;
  }
  if (in.bad()) throw Error("cannot read '" + path + "': " + std::strerror(errno));
  if (text.size() > max_bytes)
    throw Error("cannot read '" + path + "': larger than " + std::to_string(max_bytes) +
                " bytes, the most a " + std::string(what) + " may have");
  return text;
}

std::optional<TextProblem> find_control_byte(std::string_view text, std::string_view what) {
  int line = 1, col = 1;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\t' && c != '\n' && c != '\r') || u == 0x7f)
      return TextProblem{line, col,
                         "control character " + printable(std::string_view(&c, 1)) +
                             " in the file: a " + std::string(what) + " is text"};
    if (c == '\n') ++line, col = 1;
    else ++col;
  }
  return std::nullopt;
}

std::optional<TextProblem> find_second_document(const std::string& text, std::string_view what) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  DocumentCounter counter;
  if (!parser.HandleNextDocument(counter) || !parser.HandleNextDocument(counter)) return std::nullopt;
  return TextProblem{counter.second_.line + 1, counter.second_.column + 1,
                     "more YAML after the end of the first document; a " + std::string(what) +
                         " is one document"};
}

}  // namespace tbtune
