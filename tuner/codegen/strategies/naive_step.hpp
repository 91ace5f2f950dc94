#pragma once
/// @file naive_step.hpp
/// The one-step kernel of templates/step.cuh, one thread per interior cell: the naive strategy's
/// kernel, and the step kernel (kCellStepKernel) of the strategies whose own loop is too costly to
/// build again for one step (wpipe2d, wpipe3d). Implemented in naive.cpp.
#include "model/device_profile.hpp"
#include "model/model.hpp"
#include "tuner/codegen/codegen.hpp"
#include "tuner/codegen/strategy.hpp"

namespace tbtune {

/// The defines templates/step.cuh needs (its block shape).
[[nodiscard]] Defines naive_step_defines(const Problem& problem);
/// Its launch: one thread per interior cell.
[[nodiscard]] Launch naive_step_launch(const Problem& problem);
/// Its terms for the model: one step, each cell read and written once.
[[nodiscard]] ModelTerms naive_step_terms(const Problem& problem);

}  // namespace tbtune
