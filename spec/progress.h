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
//
// Two tracks: the phases of the main track follow one another; a phase on the beside track
// runs at the same time as them (the sharp verdict's first pass beside the reference,
// verify/sharp/sharp_verdict.h SharpBeside) and is shown after the main one on the same line,
// "reference …; sharp verdict …".
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace ssmv::progress {

enum class Track : uint8_t { main, beside };

// Starts phase `name` of `total` units named `unit` ("state updates"); the previous phase,
// if any, ends. total 0: a phase whose size is not known (shown without a share or ETA).
// Each track has its own current phase.
void begin(const std::string& name, int64_t total, const std::string& unit, Track track = Track::main);
// n more units of the track's current phase done. Thread-safe; a no-op outside a phase (work
// that runs after its phase ended, such as an attribution's small re-runs, counts nowhere).
void advance(int64_t n, Track track = Track::main);
// Ends the track's current phase (its time joins the timings).
void end(Track track = Track::main);

// A phase's wall time and the CPU time of the whole process over it (every thread, user and
// system: cpu_seconds / seconds is how many cores were busy on average), in the order the
// phases ended (a name that ran twice is summed). A phase of the beside track overlaps the
// main track's: its CPU time is the whole process's over it, the main phases' work included,
// and its seconds are not part of the main phases' sum.
struct PhaseTime {
  std::string name;
  double seconds = 0;
  double cpu_seconds = 0;
  bool beside = false;
};
std::vector<PhaseTime> timings();

// While alive, shows the progress on `out` as described above, prefixed "PREFIX: ".
// `terminal`: rewrite one line in place (\r) and clear it at the end; otherwise plain lines.
// One Display at a time; it ends the phases in progress when destroyed.
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
  Phase(const std::string& name, int64_t total, const std::string& unit, Track track = Track::main)
      : track_(track) {
    begin(name, total, unit, track);
  }
  ~Phase() { end(track_); }
  Phase(const Phase&) = delete;
  Phase& operator=(const Phase&) = delete;

 private:
  Track track_;
};

// The line shown for a phase (exposed for its test): "NAME A of B UNIT (P%), R/s, ETA E";
// with total 0, "NAME A UNIT, R/s", or "NAME, S s" while nothing is counted; `seconds` is the
// phase's elapsed time.
std::string line(const std::string& name, int64_t done, int64_t total, const std::string& unit, double seconds);

}  // namespace ssmv::progress
