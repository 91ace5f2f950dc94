#pragma once
/// @file plant.hpp
/// TEST ONLY: planted failures, so the failure isolation of a real tune can be checked on a
/// GPU (scripts/engine-gpu-check.sh). Never set this variable in production.
///
/// TBTUNE_PLANT_FAILURE="INDEX:KIND[,INDEX:KIND...]" makes the GPU worker, when asked to
/// measure the candidate at position INDEX of the tune's list (0 is the naive reference, then
/// the selected candidates in rank order), do KIND instead:
///  - `illegal`: launch a kernel that writes to an invalid address (a sticky CUDA error that
///    poisons the worker's context);
///  - `hang`: launch a kernel that never ends;
///  - `abort`: call std::abort(); `segv`: raise SIGSEGV.
#include <string>

namespace tbtune {

/// Does what TBTUNE_PLANT_FAILURE asks for candidate `index` (kernels built for `arch`, on the
/// current device); nothing when it names another index or is unset. `illegal` throws
/// CudaError; the others do not return.
void plant_failure_if_asked(int index, const std::string& arch);

}  // namespace tbtune
