#pragma once
/// @file scalar_pos.hpp
/// Internal to spec.cpp: maps each character of a YAML scalar's value back to the file, so an
/// error inside a quoted or multi-line `expr:` points at the right line and column.
#include <string>
#include <string_view>
#include <vector>

namespace tbtune::detail {

/// A 1-based line and column in a file.
struct TextPos {
  int line = 1;
  int col = 1;
};

/// File position of every byte of `value`, the scalar whose token starts at 0-based `line`,
/// `col` of `text`, plus one position just past its end (size == value.size() + 1).
/// Handles plain, 'single' and "double" quoted scalars (with folding and the common escapes)
/// and `|` literal blocks. Returns an empty vector when it cannot reproduce `value` exactly
/// (folded `>` blocks, tags, rare escapes): callers then fall back to the token's mark.
[[nodiscard]] std::vector<TextPos> scalar_positions(std::string_view text, int line, int col,
                                                    const std::string& value);

}  // namespace tbtune::detail
