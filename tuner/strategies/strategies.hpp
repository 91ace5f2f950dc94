#pragma once
/// @file strategies.hpp
/// Factories of the built-in strategies (one file each in tuner/strategies/), for the registry.
#include <memory>

#include "tuner/strategy.hpp"

namespace tbtune {

std::unique_ptr<Strategy> make_naive_strategy();
std::unique_ptr<Strategy> make_stream_strategy();
std::unique_ptr<Strategy> make_cmq2d_strategy();
std::unique_ptr<Strategy> make_smtile3d_strategy();
std::unique_ptr<Strategy> make_devtile3d_strategy();

/// ceil(a / b) for a launch dimension.
[[nodiscard]] inline unsigned ceil_div(long a, long b) { return unsigned((a + b - 1) / b); }

}  // namespace tbtune
