#include "cli/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

namespace tbtune::cli {

Progress::Progress(bool quiet) : quiet_(quiet), tty_(isatty(fileno(stderr)) != 0) {}

void Progress::operator()(const TuneEvent& e) {
  if (quiet_) return;
  if (e.kind == TuneEvent::Kind::Measured && e.trial && e.trial->status == TrialStatus::Ok)
    best_ = std::max(best_, e.trial->gcells_median);
  if (tty_) {
    const int width = 24;
    const int done = e.kind == TuneEvent::Kind::Measured ? e.index + 1 : e.index;
    const int filled = e.total ? done * width / e.total : width;
    std::string bar(std::size_t(filled), '#');
    bar.resize(std::size_t(width), '.');
    fmt::print(stderr, "\r[{}] {}/{} candidates, best {:.1f} GCells/s\x1b[K", bar, done, e.total, best_);
    if (done == e.total) fmt::print(stderr, "\n");
    std::fflush(stderr);
  } else if (e.kind == TuneEvent::Kind::Measured && e.trial) {
    const Trial& t = *e.trial;
    fmt::print(stderr, "tbtune: {}/{} {} {} {} {:.1f} GCells/s (best {:.1f})\n", e.index + 1,
               e.total, t.strategy, params_text(t.params), trial_status_name(t.status),
               t.gcells_median, best_);
  }
}

}  // namespace tbtune::cli
