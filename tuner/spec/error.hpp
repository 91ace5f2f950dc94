#pragma once
/// @file error.hpp
/// The one error hierarchy of tbtune. Library code throws these; only `main` catches them,
/// prints `what()` as one line and maps them to an exit code (see README "Exit codes").
#include <stdexcept>
#include <string>
#include <string_view>

namespace tbtune {

/// `text` as it may appear in a one-line message: printable ASCII as it is, every other byte
/// as \xNN (a NUL would cut the message short, a newline would split it).
[[nodiscard]] inline std::string printable(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f) {
      out += c;
    } else {
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 15];
    }
  }
  return out;
}

/// Root of every error tbtune throws on purpose.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A problem in a stencil spec. `what()` reads "file:line:col: message".
class SpecError : public Error {
 public:
  SpecError(std::string file, int line, int col, const std::string& message)
      : Error(file + ":" + std::to_string(line) + ":" + std::to_string(col) + ": " + message),
        file_(std::move(file)), line_(line), col_(col), message_(message) {}
  [[nodiscard]] const std::string& file() const { return file_; }
  [[nodiscard]] int line() const { return line_; }
  [[nodiscard]] int col() const { return col_; }
  /// The message without the location prefix.
  [[nodiscard]] const std::string& message() const { return message_; }

 private:
  std::string file_;
  int line_;
  int col_;
  std::string message_;
};

/// Bad command-line values that CLI11 cannot see (for example `--domain 12x`).
class UsageError : public Error {
 public:
  using Error::Error;
};

/// A failing CUDA runtime call; the message names the call and where it was made.
class CudaError : public Error {
 public:
  using Error::Error;
};

/// No usable GPU (no driver, no device): an expected condition on login nodes and CI.
class NoGpuError : public CudaError {
 public:
  using CudaError::CudaError;
};

/// NVRTC rejected a generated source; `log()` holds the compiler's program log.
class CompileError : public Error {
 public:
  CompileError(const std::string& message, std::string log)
      : Error(message), log_(std::move(log)) {}
  [[nodiscard]] const std::string& log() const { return log_; }

 private:
  std::string log_;
};

/// An SQLite failure; `code()` is the SQLite result code.
class CacheError : public Error {
 public:
  CacheError(const std::string& message, int code) : Error(message), code_(code) {}
  [[nodiscard]] int code() const { return code_; }

 private:
  int code_;
};

}  // namespace tbtune
