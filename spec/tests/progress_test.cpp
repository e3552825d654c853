// spec/progress.h: the line a phase shows, phases and their timings, and what a Display
// writes when stderr is a terminal (one line rewritten in place, cleared at the end) and when
// it is not (plain lines, no carriage return).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <thread>

#include "spec/progress.h"

namespace ssmv::progress {
namespace {

TEST(ProgressLine, NamesTheShareTheRateAndTheTimeLeft) {
  // 1.05e9 of 2.1e9 in 3 s: 350 M/s, 3 s left.
  EXPECT_EQ(line("reference", 1050000000, 2100000000, "state updates", 3.0),
            "reference 1.05 G of 2.10 G state updates (50%), 350 M/s, ETA 3 s");
  EXPECT_EQ(line("bounds", 12345, 0, "tasks", 1.0), "bounds 12.3 k tasks, 12.3 k/s");
  EXPECT_EQ(line("reading the dump", 0, 0, "", 2.5), "reading the dump, 3 s");
  // Done: no ETA; 90 minutes left are said in minutes, 10 hours in hours.
  EXPECT_EQ(line("x", 10, 10, "u", 1.0), "x 10 of 10 u (100%), 10/s");
  EXPECT_EQ(line("x", 1, 5401, "u", 1.0), "x 1 of 5401 u (0%), 1/s, ETA 90 min");
  EXPECT_EQ(line("x", 1, 36001, "u", 1.0), "x 1 of 36.0 k u (0%), 1/s, ETA 10.0 h");
}

TEST(ProgressPhases, CountOnlyInsideAPhaseAndKeepTheirTimes) {
  advance(5);  // outside a phase: counts nowhere
  {
    const Phase a("phase one", 10, "u");
    advance(3);
  }
  { const Phase b("phase two", 0, ""); }
  { const Phase a("phase one", 10, "u"); }
  const std::vector<PhaseTime> t = timings();
  ASSERT_GE(t.size(), 2u);
  bool one = false, two = false;
  for (const PhaseTime& p : t) {
    one |= p.name == "phase one" && p.seconds >= 0;
    two |= p.name == "phase two";
  }
  EXPECT_TRUE(one && two);
  int ones = 0;
  for (const PhaseTime& p : t) ones += p.name == "phase one";
  EXPECT_EQ(ones, 1) << "a phase that ran twice is one entry, its times summed";
}

// A phase's CPU time is the process's over the phase: a phase that spins on one thread for
// 50 ms of wall time has used CPU time, and no more than its wall time times the threads
// (one here, with a margin for the clocks' granularity).
TEST(ProgressPhases, KeepTheProcessCpuTimeOfEachPhase) {
  {
    const Phase busy("busy phase", 0, "");
    const auto start = std::chrono::steady_clock::now();
    volatile double sink = 0;
    while (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(50)) sink = sink + 1.0;
  }
  for (const PhaseTime& p : timings()) {
    if (p.name != "busy phase") continue;
    EXPECT_GT(p.cpu_seconds, 0.0);
    EXPECT_LE(p.cpu_seconds, p.seconds + 0.02);
    return;
  }
  ADD_FAILURE() << "the phase was not kept";
}

// What a Display shows of a main phase 40 % done, with (`beside`) a phase on the beside track
// 4 of 10 done started before it.
std::string shown(bool terminal, bool beside = false) {
  std::FILE* f = std::tmpfile();
  {
    const Display d(f, "ssmv check", terminal, 0, 20);
    std::optional<Phase> side;
    if (beside) {
      side.emplace("emulations", 10, "runs", Track::beside);
      advance(4, Track::beside);
    }
    const Phase p("reference", 100, "state updates");
    advance(40);
    std::this_thread::sleep_for(std::chrono::milliseconds(120));
  }
  std::string text;
  std::rewind(f);
  for (int ch; (ch = std::fgetc(f)) != EOF;) text += char(ch);
  std::fclose(f);
  return text;
}

TEST(ProgressDisplay, PlainLinesWhenNotATerminal) {
  const std::string text = shown(false);
  EXPECT_NE(text.find("ssmv check: reference 40 of 100 state updates (40%)"), std::string::npos) << text;
  EXPECT_EQ(text.find('\r'), std::string::npos) << "a log gets no carriage returns";
  EXPECT_EQ(text.back(), '\n');
}

TEST(ProgressDisplay, OneLineRewrittenAndClearedOnATerminal) {
  const std::string text = shown(true);
  EXPECT_NE(text.find("\rssmv check: reference 40 of 100"), std::string::npos) << text;
  EXPECT_EQ(text.find('\n'), std::string::npos) << "the line is rewritten in place";
  EXPECT_EQ(text.back(), '\r') << "and cleared at the end";
}

// A phase on the beside track runs while the main track's phases follow one another: both
// are shown on one line, main first, and the beside phase's time is kept apart (marked beside).
TEST(ProgressDisplay, ABesidePhaseIsShownAfterTheMainOneAndTimedApart) {
  const std::string text = shown(false, true);
  EXPECT_NE(text.find("ssmv check: reference 40 of 100 state updates (40%)"), std::string::npos) << text;
  EXPECT_NE(text.find("; emulations 4 of 10 runs (40%)"), std::string::npos) << text;
  bool beside = false, main = false;
  for (const PhaseTime& t : timings()) {
    beside |= t.name == "emulations" && t.beside && t.seconds >= 0.1;
    main |= t.name == "reference" && !t.beside;
  }
  EXPECT_TRUE(beside && main);
}

}  // namespace
}  // namespace ssmv::progress
