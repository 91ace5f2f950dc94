#pragma once
/// @file progress.hpp
/// Shows tuning progress on stderr. On a terminal: one redrawn line with a bar, candidates
/// done/total, the best GCells/s so far and an ETA. Elsewhere (Slurm logs): a plain line when a
/// candidate finishes, at most one every 5 seconds (and always for the last one). --quiet:
/// nothing; --verbose: one line per trial with its status and message, besides the above.
#include <cstdio>

#include "tuner/search/engine.hpp"

namespace tbtune::cli {

enum class Verbosity { Quiet, Normal, Verbose };

class Progress {
 public:
  /// `tty`: redraw one line (a terminal) or write plain lines. Times come from the events.
  Progress(Verbosity verbosity, bool tty, std::FILE* out = stderr);
  /// For stderr as it is: a terminal or not.
  explicit Progress(Verbosity verbosity);
  /// Ends a bar's line left open (a stopped or budget-cut tune never reaches its total), so
  /// that what the command prints next starts on a line of its own.
  ~Progress();
  void operator()(const TuneEvent& e);

  /// Seconds between plain lines when not on a terminal.
  static constexpr double kPlainInterval = 5.0;

 private:
  void draw_bar(const TuneEvent& e, int done);
  void plain_line(const TuneEvent& e, int done);

  Verbosity verbosity_;
  bool tty_;
  std::FILE* out_;
  double best_ = 0;
  double last_line_s_ = -1e9;
  bool bar_open_ = false;   ///< a bar was drawn and its line not ended
  int run_done_ = 0;        ///< finished candidates that were run (not resumed)
  double run_seconds_ = 0;  ///< elapsed when the last of them finished
};

}  // namespace tbtune::cli
