#pragma once
/// @file yaml_text.hpp
/// Reading the YAML files other people write (specs, sweep files) safely: a read that stops at a
/// size limit, and the checks yaml-cpp does not make on its input. Shared so that every file
/// tbtune reads is held to the same rules (docs/hardening.md).
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace tbtune {

/// A problem at a place in a text: 1-based line and column, and what is wrong there.
struct TextProblem {
  int line = 1;
  int col = 1;
  std::string message;
};

/// The whole file at `path`, reading at most `max_bytes + 1` bytes, so `/dev/zero` or a huge
/// file cannot fill memory. Throws tbtune::Error ("cannot read 'path': <why>") for a folder, a
/// file that cannot be read, or one longer than `max_bytes` (named as "a `what`").
[[nodiscard]] std::string read_bounded(const std::string& path, std::size_t max_bytes,
                                       std::string_view what);

/// The first control byte but tab and line breaks, which YAML forbids and yaml-cpp misreads
/// (given a NUL it reports a place elsewhere), or nothing.
[[nodiscard]] std::optional<TextProblem> find_control_byte(std::string_view text,
                                                           std::string_view what);

/// Where a second YAML document starts, or nothing when `text` holds one: yaml-cpp's Load
/// drops every document after the first without a word. Throws YAML::Exception on YAML that
/// does not parse (callers load the first document before, and report it there).
[[nodiscard]] std::optional<TextProblem> find_second_document(const std::string& text,
                                                              std::string_view what);

}  // namespace tbtune
