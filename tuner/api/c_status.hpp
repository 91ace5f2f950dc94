#pragma once
/// @file c_status.hpp
/// Internal to tuner/api: the C API's boundary. guard() runs a call, turns any exception into
/// a tbtune_status and keeps its message for tbtune_last_message().
#include <exception>
#include <string>

#include "tbtune/tbtune.h"
#include "tbtune/tbtune.hpp"

namespace tbtune::capi {

/// Sets the calling thread's last message.
void set_message(std::string text);
/// The calling thread's last message ("" before any call).
[[nodiscard]] const char* message();

/// Throws ApiError(BadArgument, `what`) unless `ok`.
inline void require(bool ok, const char* what) {
  if (!ok) throw ApiError(ErrorCode::BadArgument, what);
}

/// Runs `call` (which returns a tbtune_status); any exception becomes its status and message.
template <class Call>
tbtune_status guard(Call&& call) noexcept {
  try {
    return call();
  } catch (const ApiError& e) {
    set_message(e.what());
    return static_cast<tbtune_status>(e.code());
  } catch (const std::exception& e) {
    set_message(e.what());
    return TBTUNE_ERR_INTERNAL;
  } catch (...) {
    set_message("unknown error");
    return TBTUNE_ERR_INTERNAL;
  }
}

}  // namespace tbtune::capi
