#include "tuner/spec/scalar_pos.hpp"

namespace tbtune::detail {
namespace {

bool is_blank(char c) { return c == ' ' || c == '\t'; }

/// Walks the raw file text, tracking the position, and collects the decoded value.
class Walker {
 public:
  Walker(std::string_view text, std::size_t p, TextPos at) : text_(text), p_(p), at_(at) {}

  [[nodiscard]] bool end() const { return p_ >= text_.size(); }
  [[nodiscard]] char cur() const { return end() ? '\0' : text_[p_]; }
  [[nodiscard]] TextPos here() const { return at_; }
  void advance() {
    if (cur() == '\n') {
      ++at_.line;
      at_.col = 1;
    } else {
      ++at_.col;
    }
    ++p_;
  }
  void skip_blanks() {
    while (is_blank(cur())) advance();
  }
  void emit(char c, TextPos at) {
    out.push_back(c);
    pos.push_back(at);
  }

  /// Flow-scalar line folding at a blank or a break: trailing blanks are dropped, one break
  /// becomes a space, n breaks become n-1 newlines. False when the blanks are not followed
  /// by a break (they are then ordinary characters).
  bool fold() {
    // Blanks already found not to end at a break are ordinary: do not scan them again, or a
    // long run of blanks would cost time quadratic in its length.
    if (p_ < ordinary_until_) return false;
    std::size_t q = p_;
    while (q < text_.size() && is_blank(text_[q])) ++q;
    if (q >= text_.size() || text_[q] != '\n') {
      ordinary_until_ = q;
      return false;
    }
    while (p_ < q) advance();
    const TextPos brk = here();
    int breaks = 0;
    while (cur() == '\n') {
      ++breaks;
      advance();
      skip_blanks();
    }
    if (breaks == 1) emit(' ', brk);
    for (int i = 1; i < breaks; ++i) emit('\n', brk);
    return true;
  }

  std::string out;
  std::vector<TextPos> pos;

 private:
  std::string_view text_;
  std::size_t p_;
  TextPos at_;
  std::size_t ordinary_until_ = 0;  ///< end of the last blank run that fold() found unfoldable
};

bool double_quoted(Walker& w) {
  w.advance();  // the opening quote
  for (;;) {
    const char c = w.cur();
    if (w.end() || c == '\r') return false;
    if (c == '"') return true;
    if (c == '\\') {
      const TextPos at = w.here();
      w.advance();
      char d = w.cur();
      switch (d) {
        case '\n': w.advance(); w.skip_blanks(); continue;  // escaped line break: nothing
        case 'n': d = '\n'; break;
        case 't': case '\t': d = '\t'; break;
        case 'r': d = '\r'; break;
        case '0': d = '\0'; break;
        case 'a': d = '\a'; break;
        case 'b': d = '\b'; break;
        case 'v': d = '\v'; break;
        case 'f': d = '\f'; break;
        case 'e': d = '\x1b'; break;
        case '"': case '\\': case '/': case ' ': break;
        default: return false;  // \x, \u, ... : rare, leave them to the fallback
      }
      w.emit(d, at);
      w.advance();
      continue;
    }
    if ((is_blank(c) || c == '\n') && w.fold()) continue;
    w.emit(c, w.here());
    w.advance();
  }
}

bool single_quoted(Walker& w) {
  w.advance();
  for (;;) {
    const char c = w.cur();
    if (w.end() || c == '\r') return false;
    if (c == '\'') {
      const TextPos at = w.here();
      w.advance();
      if (w.cur() != '\'') return true;  // the closing quote; '' is an escaped quote
      w.emit('\'', at);
      w.advance();
      continue;
    }
    if ((is_blank(c) || c == '\n') && w.fold()) continue;
    w.emit(c, w.here());
    w.advance();
  }
}

void plain(Walker& w, std::size_t size) {
  while (w.out.size() < size && !w.end() && w.cur() != '\r') {
    const char c = w.cur();
    if ((is_blank(c) || c == '\n') && w.fold()) continue;
    w.emit(c, w.here());
    w.advance();
  }
}

bool literal_block(Walker& w, std::string_view text, std::size_t p, std::size_t size) {
  while (!w.end() && w.cur() != '\n') w.advance(), ++p;  // the "|" header line
  if (w.end()) return false;
  w.advance();
  ++p;
  // Indentation: that of the first line with content.
  std::size_t indent = 0;
  for (std::size_t q = p, run = 0; q < text.size(); ++q) {
    if (text[q] == ' ') ++run;
    else if (text[q] == '\n') run = 0;
    else { indent = run; break; }
  }
  if (indent == 0) return false;
  while (w.out.size() < size && !w.end()) {
    for (std::size_t i = 0; i < indent && w.cur() == ' '; ++i) w.advance();
    while (!w.end() && w.cur() != '\n') {
      if (w.cur() == '\r') return false;
      w.emit(w.cur(), w.here());
      w.advance();
    }
    if (w.end()) break;
    w.emit('\n', w.here());
    w.advance();
  }
  return true;
}

}  // namespace

std::vector<TextPos> scalar_positions(std::string_view text, int line, int col,
                                      const std::string& value) {
  if (line < 0 || col < 0) return {};
  std::size_t p = 0;
  for (int l = 0; l < line; ++l) {
    p = text.find('\n', p);
    if (p == std::string_view::npos) return {};
    ++p;
  }
  p += static_cast<std::size_t>(col);
  if (p >= text.size()) return {};
  Walker w(text, p, TextPos{line + 1, col + 1});
  bool ok = true;
  switch (text[p]) {
    case '"': ok = double_quoted(w); break;
    case '\'': ok = single_quoted(w); break;
    case '|': ok = literal_block(w, text, p, value.size()); break;
    case '>': case '!': case '&': case '*': ok = false; break;  // folded, tagged, anchored
    default: plain(w, value.size()); break;
  }
  if (!ok || w.out != value) return {};
  w.pos.push_back(w.here());
  return std::move(w.pos);
}

}  // namespace tbtune::detail
