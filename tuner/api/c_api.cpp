// The C API (include/tbtune/tbtune.h) over the C++ one: every call catches everything, so no
// exception crosses into C or Fortran, and leaves one line in a thread-local message.
#include "tbtune/tbtune.h"

#include <exception>
#include <string>

#include "tbtune/tbtune.hpp"
#include "tuner/api/c_status.hpp"

struct tbtune_kernel {
  tbtune::TunedKernel kernel;
};

namespace tbtune {
namespace {

LookupOptions to_options(const tbtune_options* c) {
  LookupOptions o;
  if (!c) return o;
  if (c->db) o.db = c->db;
  if (c->nx || c->ny || c->nz) o.domain = std::array<long, 3>{c->nx, c->ny, c->nz ? c->nz : 1};
  if (c->dtype == TBTUNE_DTYPE_FLOAT) o.dtype = Precision::Float;
  else if (c->dtype == TBTUNE_DTYPE_DOUBLE) o.dtype = Precision::Double;
  else if (c->dtype != TBTUNE_DTYPE_SPEC)
    throw ApiError(ErrorCode::BadArgument, "dtype " + std::to_string(c->dtype) +
                                               ": expected TBTUNE_DTYPE_SPEC, _FLOAT or _DOUBLE");
  if (c->steps) o.steps = c->steps;
  if (c->policy < TBTUNE_POLICY_DEFAULT || c->policy > TBTUNE_POLICY_MODEL)
    throw ApiError(ErrorCode::BadArgument, "policy " + std::to_string(c->policy) + ": expected a TBTUNE_POLICY_* value");
  if (c->policy != TBTUNE_POLICY_DEFAULT) o.policy = static_cast<MissPolicy>(c->policy);
  return o;
}

tbtune_status finish_lookup(Lookup l, tbtune_kernel** kernel, int* reason) {
  if (reason) *reason = static_cast<int>(l.reason);
  *kernel = l.kernel ? new tbtune_kernel{std::move(*l.kernel)} : nullptr;
  capi::set_message(l.message);
  return TBTUNE_OK;
}

}  // namespace
}  // namespace tbtune

using tbtune::capi::guard;

extern "C" {

void tbtune_options_init(tbtune_options* o) {
  if (o) *o = tbtune_options{nullptr, 0, 0, 0, TBTUNE_DTYPE_SPEC, 0, TBTUNE_POLICY_DEFAULT};
}

const char* tbtune_last_message(void) { return tbtune::capi::message(); }

const char* tbtune_reason_name(int reason) {
  if (reason < 0 || reason > TBTUNE_MISS_STALE_KERNEL) return "unknown";
  return tbtune::reason_name(static_cast<tbtune::MissReason>(reason));
}

tbtune_status tbtune_lookup(const char* spec_path, const tbtune_options* options, tbtune_kernel** kernel,
                            int* reason) {
  return guard([&] {
    tbtune::capi::require(spec_path && kernel, "tbtune_lookup: spec_path and kernel must not be NULL");
    *kernel = nullptr;
    return tbtune::finish_lookup(tbtune::lookup(std::string(spec_path), tbtune::to_options(options)),
                                 kernel, reason);
  });
}

tbtune_status tbtune_lookup_text(const char* spec_text, const tbtune_options* options,
                                 tbtune_kernel** kernel, int* reason) {
  return guard([&] {
    tbtune::capi::require(spec_text && kernel, "tbtune_lookup_text: spec_text and kernel must not be NULL");
    *kernel = nullptr;
    return tbtune::finish_lookup(tbtune::lookup_text(spec_text, tbtune::to_options(options)), kernel, reason);
  });
}

tbtune_status tbtune_naive(const char* spec_path, const tbtune_options* options, tbtune_kernel** kernel) {
  return guard([&] {
    tbtune::capi::require(spec_path && kernel, "tbtune_naive: spec_path and kernel must not be NULL");
    *kernel = nullptr;
    auto k = tbtune::naive_kernel(tbtune::StencilSpec::from_file(spec_path), tbtune::to_options(options));
    *kernel = new tbtune_kernel{std::move(k)};
    tbtune::capi::set_message("naive kernel compiled");
    return TBTUNE_OK;
  });
}

tbtune_status tbtune_run(tbtune_kernel* kernel, void* a, void* b, long steps, void* stream, void** result) {
  return guard([&] {
    if (!kernel) throw tbtune::ApiError(tbtune::ErrorCode::NoKernel, "tbtune_run: the kernel is NULL (a miss?)");
    tbtune::capi::require(result != nullptr, "tbtune_run: result must not be NULL");
    *result = kernel->kernel.run(a, b, steps, stream);
    tbtune::capi::set_message("");
    return TBTUNE_OK;
  });
}

const char* tbtune_kernel_strategy(const tbtune_kernel* k) { return k ? k->kernel.strategy().c_str() : ""; }
double tbtune_kernel_tuned_gcells(const tbtune_kernel* k) { return k ? k->kernel.tuned_gcells() : 0; }
int tbtune_kernel_source(const tbtune_kernel* k) { return k ? static_cast<int>(k->kernel.source()) : 0; }

tbtune_status tbtune_kernel_shape(const tbtune_kernel* k, long domain[3], int* dtype) {
  return guard([&] {
    if (!k) throw tbtune::ApiError(tbtune::ErrorCode::NoKernel, "tbtune_kernel_shape: the kernel is NULL");
    tbtune::capi::require(domain && dtype, "tbtune_kernel_shape: domain and dtype must not be NULL");
    const auto d = k->kernel.domain();
    for (int i = 0; i < 3; ++i) domain[i] = d[std::size_t(i)];
    *dtype = k->kernel.dtype() == tbtune::Precision::Float ? TBTUNE_DTYPE_FLOAT : TBTUNE_DTYPE_DOUBLE;
    return TBTUNE_OK;
  });
}

void tbtune_kernel_free(tbtune_kernel* k) { delete k; }

}  // extern "C"
