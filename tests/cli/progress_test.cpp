// Tests for cli/progress: the plain-line rate limit for logs, --quiet, --verbose, and the
// redrawn bar on a terminal.
#include "cli/progress.hpp"

#include <cstdio>
#include <string>

#include <gtest/gtest.h>

namespace tbtune::cli {
namespace {

struct Capture {
  Capture() : file(std::tmpfile()) {}
  ~Capture() { std::fclose(file); }
  std::string text() {
    std::fflush(file);
    std::rewind(file);
    std::string out;
    for (int c; (c = std::fgetc(file)) != EOF;) out.push_back(char(c));
    return out;
  }
  std::FILE* file;
};

int lines(const std::string& s) { return int(std::count(s.begin(), s.end(), '\n')); }

Trial ok_trial(double gcells) {
  Trial t;
  t.strategy = "stream";
  t.status = TrialStatus::Ok;
  t.gcells_median = gcells;
  return t;
}

// Finishes candidate i of `total` at `elapsed` seconds.
void finish(Progress& p, const Trial& t, int i, int total, double elapsed) {
  p({TuneEvent::Kind::Start, i, total, nullptr, elapsed});
  p({TuneEvent::Kind::Measured, i, total, &t, elapsed});
}

TEST(Progress, PlainLinesAtMostEveryFiveSecondsAndForTheLast) {
  Capture c;
  Progress p(Verbosity::Normal, false, c.file);
  const Trial t = ok_trial(12.5);
  const double at[] = {0.5, 1, 2, 6, 7, 8};
  for (int i = 0; i < 6; ++i) finish(p, t, i, 6, at[i]);
  const std::string out = c.text();
  EXPECT_EQ(lines(out), 3) << out;  // at 0.5 s, at 6 s, and the last
  EXPECT_NE(out.find("1/6 candidates done"), std::string::npos) << out;
  EXPECT_NE(out.find("4/6 candidates done, best 12.5 GCells/s"), std::string::npos) << out;
  EXPECT_NE(out.find("6/6"), std::string::npos) << out;
  EXPECT_NE(out.find("ETA"), std::string::npos) << out;
  EXPECT_EQ(out.find('\r'), std::string::npos);
}

TEST(Progress, QuietPrintsNothing) {
  Capture c;
  Progress p(Verbosity::Quiet, true, c.file);
  const Trial t = ok_trial(1);
  finish(p, t, 0, 1, 1);
  EXPECT_TRUE(c.text().empty());
}

TEST(Progress, VerboseGivesOneLinePerTrialWithItsTimeStatusAndMessage) {
  Capture c;
  Progress p(Verbosity::Verbose, false, c.file);
  Trial bad = ok_trial(0);
  bad.status = TrialStatus::Timeout;
  bad.message = "no answer within 60 s\nsecond line";
  const Trial good = ok_trial(3);
  finish(p, good, 0, 3, 0.1);
  finish(p, bad, 1, 3, 0.2);
  finish(p, good, 2, 3, 0.3);
  const std::string out = c.text();
  EXPECT_NE(out.find("[2/3, 0.2 s] stream  timeout: no answer within 60 s\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("second line"), std::string::npos);
  EXPECT_NE(out.find("[3/3, 0.3 s] stream  ok 3.0 GCells/s"), std::string::npos) << out;
  EXPECT_EQ(lines(out), 3 + 2);  // per trial, plus the plain lines at the start and the end
}

TEST(Progress, TerminalRedrawsOneLine) {
  Capture c;
  Progress p(Verbosity::Normal, true, c.file);
  const Trial t = ok_trial(7);
  finish(p, t, 0, 2, 1);
  std::string out = c.text();
  EXPECT_NE(out.find("\r["), std::string::npos);
  EXPECT_NE(out.find("1/2 candidates, best 7.0 GCells/s, ETA 0:01"), std::string::npos) << out;
  EXPECT_EQ(lines(out), 0);
  finish(p, t, 1, 2, 2);
  EXPECT_EQ(lines(c.text()), 1);  // ends the line when done
}

// A tune stopped before its total (Ctrl-C, --budget) leaves no bar line open for what comes next.
TEST(Progress, AStoppedTuneEndsTheBarsLine) {
  Capture c;
  {
    Progress p(Verbosity::Normal, true, c.file);
    const Trial t = ok_trial(7);
    finish(p, t, 0, 3, 1);
    EXPECT_EQ(lines(c.text()), 0);
  }
  const std::string out = c.text();
  EXPECT_EQ(lines(out), 1) << out;
  EXPECT_EQ(out.back(), '\n');
  Capture plain;
  { Progress p(Verbosity::Normal, false, plain.file); }
  EXPECT_TRUE(plain.text().empty());
}

}  // namespace
}  // namespace tbtune::cli
