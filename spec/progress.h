// Progress of a long command, for the person waiting on it: the parts that do the work (the
// tensor-file reader, the bounds, the reference, the sharp verdict) name their phase and count
// units done; the command (ssmv check) decides whether anything is shown. One process-wide
// state, since the work is spread over libraries that know nothing of the command line.
//
// What is shown (a Display, on stderr): nothing for the first 2 s, then one line per phase
//   ssmv check: reference 1.2e9 of 2.1e9 state updates (57%), 310 M/s, ETA 3 s
// rewritten in place about twice a second on a terminal, and printed as a plain line every
// 5 s when stderr is not a terminal (a CI log gets no carriage returns). The phase's own
// wall time is kept either way, for `--timings`.
//
// Cost for the workers: advance() is one relaxed atomic add; the callers advance once per
// token of a (sequence, head) pair or per task, never per element.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace ssmv::progress {

// Starts phase `name` of `total` units named `unit` ("state updates"); the previous phase,
// if any, ends. total 0: a phase whose size is not known (shown without a share or ETA).
void begin(const std::string& name, int64_t total, const std::string& unit);
// n more units of the current phase done. Thread-safe; a no-op outside a phase (work that
// runs after its phase ended, such as an attribution's small re-runs, counts nowhere).
void advance(int64_t n);
// Ends the current phase (its time joins the timings).
void end();

// A phase's wall time and the CPU time of the whole process over it (every thread, user and
// system: cpu_seconds / seconds is how many cores were busy on average), in the order the
// phases ran (a name that ran twice is summed).
struct PhaseTime {
  std::string name;
  double seconds = 0;
  double cpu_seconds = 0;
};
std::vector<PhaseTime> timings();

// While alive, shows the progress on `out` as described above, prefixed "PREFIX: ".
// `terminal`: rewrite one line in place (\r) and clear it at the end; otherwise plain lines.
// One Display at a time; it ends the phase in progress when destroyed.
class Display {
 public:
  // `delay`, `period_ms`: when the first line comes and how often the next (the defaults above;
  // the tests pass smaller ones). period_ms 0: 500 ms on a terminal, 5000 ms otherwise.
  Display(std::FILE* out, std::string prefix, bool terminal, int delay_ms = 2000, int period_ms = 0);
  ~Display();
  Display(const Display&) = delete;
  Display& operator=(const Display&) = delete;

 private:
  struct Impl;
  Impl* impl_;
};

// A phase that ends when the scope does (also on an exception).
class Phase {
 public:
  Phase(const std::string& name, int64_t total, const std::string& unit) { begin(name, total, unit); }
  ~Phase() { end(); }
  Phase(const Phase&) = delete;
  Phase& operator=(const Phase&) = delete;
};

// The line shown for a phase (exposed for its test): "NAME A of B UNIT (P%), R/s, ETA E";
// with total 0, "NAME A UNIT, R/s", or "NAME, S s" while nothing is counted; `seconds` is the
// phase's elapsed time.
std::string line(const std::string& name, int64_t done, int64_t total, const std::string& unit, double seconds);

}  // namespace ssmv::progress
