#pragma once
/// @file compile_ahead.hpp
/// `tbtune sweep --compile-only`: on a node without a GPU, compile every candidate a tune of a
/// problem would compile, into the folder of compiled CUBINs that the tune reads, so that the
/// GPU run that follows compiles nothing.
#include <atomic>
#include <string>

#include "db/cache.hpp"
#include "model/device_profile.hpp"
#include "tuner/sweep/problems.hpp"

namespace tbtune {

/// Compiles, with NVRTC on `threads` threads (0: one per hardware thread), the candidates that
/// tune() would hand the engine for `problem` when modelling with `profile` (the naive
/// reference, the selection, the stand-ins: choose_candidates), for the profile's architecture,
/// plus the comparison kernel the GPU worker verifies with; all into `cubins_dir`. Candidates
/// already there are read, not compiled (a re-run resumes). A candidate NVRTC rejects counts as
/// a compile error (the tune will record it as a trial). The GPU run must model with the same
/// profile (TuneOptions::profile) to choose the same candidates. Returns the record to store;
/// stops early (a partial record, `complete` false) when `stop` is set.
[[nodiscard]] CompileRecord compile_ahead(const SweepProblem& problem, const DeviceProfile& profile,
                                          const std::string& cubins_dir, unsigned threads = 0,
                                          const std::atomic<bool>* stop = nullptr,
                                          bool* complete = nullptr);

}  // namespace tbtune
