#include "tuner/gpu/verify.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tbtune {
namespace {

template <class T>
double max_error_of(const T* a, const T* b, std::size_t n) {
  double worst = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double x = double(a[i]), y = double(b[i]);
    if (!std::isfinite(x) && std::isfinite(y)) return std::numeric_limits<double>::infinity();
    if (!std::isfinite(y)) continue;  // the reference itself overflowed: nothing to compare
    worst = std::max(worst, std::fabs(x - y) / std::max(std::fabs(y), 1.0));
  }
  return worst;
}

}  // namespace

double max_error(DType dtype, const void* a, const void* b, std::size_t n) {
  return dtype == DType::Float
             ? max_error_of(static_cast<const float*>(a), static_cast<const float*>(b), n)
             : max_error_of(static_cast<const double*>(a), static_cast<const double*>(b), n);
}

double tolerance(DType dtype) { return dtype == DType::Float ? 1e-3 : 1e-9; }

}  // namespace tbtune
