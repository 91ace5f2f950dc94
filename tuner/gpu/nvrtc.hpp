#pragma once
/// @file nvrtc.hpp
/// NVRTC wrapper: generated CUDA source -> CUBIN plus ptxas' resource report. Works without a
/// GPU. Results can be kept in a folder of CUBINs keyed by a hash of source, options and NVRTC
/// version, so a re-run compiles nothing.
#include <map>
#include <string>

namespace tbtune {

/// What ptxas reported for one kernel.
struct KernelResources {
  int registers = 0;
  int spill_stores = 0;   ///< bytes
  int spill_loads = 0;    ///< bytes
  int stack_bytes = 0;
  long smem_bytes = 0;    ///< static shared memory
  [[nodiscard]] int spill_bytes() const { return spill_stores + spill_loads; }
};

struct CompiledModule {
  std::string cubin;                                ///< binary image
  std::string log;                                  ///< NVRTC program log (ptxas -v report)
  std::map<std::string, KernelResources> kernels;   ///< by kernel name
  bool from_cache = false;
};

/// "sm_90" from a compute capability.
[[nodiscard]] std::string arch_for(int cc_major, int cc_minor);
/// NVRTC version as "13.0". Loads NVRTC; throws CompileError when it cannot be loaded.
[[nodiscard]] std::string nvrtc_version();
/// Whether this process has loaded NVRTC (it is opened with dlopen on first use, so a process
/// that only runs stored CUBINs never maps it).
[[nodiscard]] bool nvrtc_loaded();
/// Parses ptxas' "-v" report in an NVRTC log (exposed for tests).
[[nodiscard]] std::map<std::string, KernelResources> parse_ptxas_log(const std::string& log);

/// Compiles `source` for `arch` ("sm_90"). `cache_dir`, if not empty, is a folder of earlier
/// results to reuse and fill. Throws CompileError with the program log on failure. Safe to call
/// from several threads (and processes) at once: cache files are written to a unique temporary
/// name and renamed into place, so a reader sees a whole file or none.
[[nodiscard]] CompiledModule compile_cuda(const std::string& source, const std::string& arch,
                                          const std::string& cache_dir = {});

/// Removes from `cache_dir` the temporaries process `writer` was writing (named NAME.tmpPID.N):
/// a compile process killed while it wrote one leaves it behind. Errors are ignored.
void remove_partial_writes(const std::string& cache_dir, long writer);

}  // namespace tbtune
