#pragma once
/// @file progress.hpp
/// Shows tuning progress on stderr: a redrawn bar on a terminal, one plain line per candidate
/// otherwise (Slurm logs), nothing with --quiet.
#include "tuner/tune.hpp"

namespace tbtune::cli {

class Progress {
 public:
  explicit Progress(bool quiet);
  void operator()(const TuneEvent& e);

 private:
  bool quiet_;
  bool tty_;
  double best_ = 0;
};

}  // namespace tbtune::cli
