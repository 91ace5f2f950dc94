#include "cli/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>

namespace tbtune::cli {
namespace {

std::string clock_text(double seconds) {
  const long s = long(seconds + 0.5);
  if (s >= 3600) return fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
  return fmt::format("{}:{:02}", s / 60, s % 60);
}

}  // namespace

Progress::Progress(Verbosity verbosity, bool tty, std::FILE* out)
    : verbosity_(verbosity), tty_(tty), out_(out) {}

Progress::Progress(Verbosity verbosity)
    : Progress(verbosity, isatty(fileno(stderr)) != 0, stderr) {}

Progress::~Progress() {
  if (bar_open_) {
    std::fputc('\n', out_);
    std::fflush(out_);
  }
}

void Progress::operator()(const TuneEvent& e) {
  if (verbosity_ == Verbosity::Quiet) return;
  const bool finished = e.kind == TuneEvent::Kind::Measured && e.trial;
  if (finished && e.trial->status == TrialStatus::Ok) best_ = std::max(best_, e.trial->gcells_median);
  if (finished && !e.trial->reused) {
    ++run_done_;
    run_seconds_ = e.elapsed_s;
  }
  const int done = finished ? e.index + 1 : e.index;
  if (finished && verbosity_ == Verbosity::Verbose) {
    const Trial& t = *e.trial;
    std::string msg = t.message.substr(0, t.message.find('\n'));
    if (msg.size() > 200) msg = msg.substr(0, 200) + "...";
    // The seconds since the search started, so that a job log shows where a tune's time went
    // (which trials waited on compiles).
    fmt::print(out_, "{}tbtune: [{}/{}, {:.1f} s] {} {} {}{}{}{}\n", tty_ ? "\r\x1b[K" : "", done, e.total,
               e.elapsed_s, t.strategy, params_text(t.params), trial_status_name(t.status),
               t.status == TrialStatus::Ok ? fmt::format(" {:.1f} GCells/s", t.gcells_median) : "",
               t.reused ? " (stored)" : "", msg.empty() ? "" : ": " + msg);
  }
  if (tty_) {
    draw_bar(e, done);
  } else if (finished && (e.elapsed_s - last_line_s_ >= kPlainInterval || done == e.total)) {
    plain_line(e, done);
  }
  std::fflush(out_);
}

void Progress::draw_bar(const TuneEvent& e, int done) {
  const int width = 24;
  const int filled = e.total ? done * width / e.total : width;
  std::string bar(std::size_t(filled), '#');
  bar.resize(std::size_t(width), '.');
  std::string eta;
  if (run_done_ > 0 && done < e.total)
    eta = ", ETA " + clock_text(run_seconds_ / run_done_ * (e.total - done));
  fmt::print(out_, "\r[{}] {}/{} candidates, best {:.1f} GCells/s{}\x1b[K", bar, done, e.total,
             best_, eta);
  bar_open_ = done < e.total;
  if (!bar_open_) fmt::print(out_, "\n");
}

void Progress::plain_line(const TuneEvent& e, int done) {
  last_line_s_ = e.elapsed_s;
  std::string eta;
  if (run_done_ > 0 && done < e.total)
    eta = ", ETA " + clock_text(run_seconds_ / run_done_ * (e.total - done));
  fmt::print(out_, "tbtune: {}/{} candidates done, best {:.1f} GCells/s, elapsed {}{}\n", done,
             e.total, best_, clock_text(e.elapsed_s), eta);
}

}  // namespace tbtune::cli
