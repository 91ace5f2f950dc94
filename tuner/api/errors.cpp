// The library's errors -> the public ApiError, and the public enums' names.
#include <exception>
#include <new>

#include "tuner/api/internal.hpp"
#include "tuner/spec/error.hpp"

namespace tbtune {

void rethrow_as_api_error() {
  try {
    throw;
  } catch (const ApiError&) {
    throw;
  } catch (const SpecError& e) {
    throw ApiError(ErrorCode::BadSpec, e.what());
  } catch (const UsageError& e) {
    throw ApiError(ErrorCode::BadArgument, e.what());
  } catch (const CacheError& e) {
    throw ApiError(ErrorCode::Cache, e.what());
  } catch (const CudaError& e) {  // NoGpuError too: a lookup answers "no GPU" before it could throw
    throw ApiError(ErrorCode::Cuda, e.what());
  } catch (const CompileError& e) {
    // The log can be long; its first lines are what says why.
    const std::string log = e.log().substr(0, 600);
    throw ApiError(ErrorCode::Compile, log.empty() ? std::string(e.what()) : std::string(e.what()) + ": " + log);
  } catch (const std::bad_alloc&) {
    throw ApiError(ErrorCode::Internal, "out of memory");
  } catch (const std::exception& e) {
    throw ApiError(ErrorCode::Internal, e.what());
  } catch (...) {
    throw ApiError(ErrorCode::Internal, "unknown error");
  }
}

const char* reason_name(MissReason r) {
  switch (r) {
    case MissReason::None: return "hit";
    case MissReason::NoCache: return "no_cache";
    case MissReason::StencilUnknown: return "stencil_unknown";
    case MissReason::NoGpu: return "no_gpu";
    case MissReason::OtherDevice: return "other_device";
    case MissReason::OtherDriver: return "other_driver";
    case MissReason::OtherDtype: return "other_dtype";
    case MissReason::OtherDomain: return "other_domain";
    case MissReason::OtherStepClass: return "other_step_class";
    case MissReason::StaleKernel: return "stale_kernel";
  }
  return "unknown";
}

const char* policy_name(MissPolicy p) {
  switch (p) {
    case MissPolicy::Fail: return "fail";
    case MissPolicy::Naive: return "naive";
    case MissPolicy::Nearest: return "nearest";
    case MissPolicy::Model: return "model";
  }
  return "unknown";
}

MissPolicy parse_policy(std::string_view name) {
  for (MissPolicy p : {MissPolicy::Fail, MissPolicy::Naive, MissPolicy::Nearest, MissPolicy::Model})
    if (name == policy_name(p)) return p;
  throw ApiError(ErrorCode::BadArgument,
                 "miss policy '" + std::string(name) + "': expected fail, naive, nearest or model");
}

}  // namespace tbtune
