// StencilSpec: a parsed spec behind the public API, and the problem a lookup asks for.
#include <fmt/format.h>

#include "tuner/api/internal.hpp"
#include "tuner/spec/error.hpp"

namespace tbtune {

StencilSpec::StencilSpec(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
StencilSpec::StencilSpec(const StencilSpec& o) : impl_(std::make_unique<Impl>(*o.impl_)) {}
StencilSpec& StencilSpec::operator=(const StencilSpec& o) {
  if (this != &o) impl_ = std::make_unique<Impl>(*o.impl_);
  return *this;
}
StencilSpec::StencilSpec(StencilSpec&&) noexcept = default;
StencilSpec& StencilSpec::operator=(StencilSpec&&) noexcept = default;
StencilSpec::~StencilSpec() = default;

StencilSpec StencilSpec::from_file(const std::string& path) {
  try {
    auto impl = std::make_unique<Impl>();
    try {
      impl->spec = load_spec(path);
    } catch (const SpecError&) {
      throw;
    } catch (const Error& e) {  // an unreadable file is a bad spec to the application
      throw ApiError(ErrorCode::BadSpec, e.what());
    }
    impl->stencil = make_stencil(impl->spec);
    return StencilSpec(std::move(impl));
  } catch (...) {
    rethrow_as_api_error();
  }
}

StencilSpec StencilSpec::from_text(std::string_view text, const std::string& name) {
  try {
    auto impl = std::make_unique<Impl>();
    impl->spec = parse_spec(text, name);
    impl->stencil = make_stencil(impl->spec);
    return StencilSpec(std::move(impl));
  } catch (...) {
    rethrow_as_api_error();
  }
}

const std::string& StencilSpec::name() const { return impl_->stencil.name; }
const std::string& StencilSpec::hash() const { return impl_->stencil.hash; }
int StencilSpec::dims() const { return impl_->stencil.dims; }
int StencilSpec::radius() const { return impl_->stencil.radius; }
Precision StencilSpec::dtype() const { return to_precision(impl_->spec.dtype); }
long StencilSpec::steps() const { return impl_->spec.steps; }
std::array<long, 3> StencilSpec::domain() const {
  std::array<long, 3> d{1, 1, 1};
  for (std::size_t i = 0; i < impl_->spec.domain.size() && i < 3; ++i) d[i] = impl_->spec.domain[i];
  return d;
}

DType to_dtype(Precision p) { return p == Precision::Float ? DType::Float : DType::Double; }
Precision to_precision(DType t) { return t == DType::Float ? Precision::Float : Precision::Double; }

Problem problem_for(const StencilSpec::Impl& s, const LookupOptions& o) {
  Problem p;
  p.stencil = s.stencil;
  p.dtype = o.dtype ? to_dtype(*o.dtype) : s.spec.dtype;
  p.steps = o.steps ? *o.steps : s.spec.steps;
  for (std::size_t i = 0; i < s.spec.domain.size() && i < 3; ++i) p.domain[i] = s.spec.domain[i];
  if (o.domain) p.domain = *o.domain;
  if (p.steps < 1) throw ApiError(ErrorCode::BadArgument, fmt::format("steps {}: must be at least 1", p.steps));
  // A kernel built for this stencil updates cells at least `radius` from every edge: a domain
  // with no such cell (or a 2D stencil given a depth) has nothing a kernel could be built for.
  const long min_side = 2L * p.stencil.radius + 1;
  for (int axis = 0; axis < 3; ++axis) {
    const long n = p.domain[std::size_t(axis)];
    const bool used = axis < p.stencil.dims;
    if ((used && n < min_side) || (!used && n != 1))
      throw ApiError(ErrorCode::BadArgument,
                     fmt::format("domain {}x{}x{}: a {}D stencil of radius {} needs {} (at least {} cells)",
                                 p.domain[0], p.domain[1], p.domain[2], p.stencil.dims, p.stencil.radius,
                                 p.stencil.dims == 2 ? "nx x ny x 1" : "nx x ny x nz", min_side));
  }
  return p;
}

}  // namespace tbtune
