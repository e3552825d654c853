// The sharp verdict: beside the rigorous verdicts (sound, worst case), a calibrated test of
// whether a tensor's error is larger than the contract's own rounding model produces, and
// which extra rounding would explain it. Never mixed with VIOLATION: a VIOLATION is a proof,
// SUSPICIOUS is evidence with its odds. Method, assumptions, false-alarm probability:
// docs/sharp-verdicts.md.
//
// Per tensor (y, final_state), every element i with a finite computed value and a positive
// bound β_i, in units of its bound:
//   residual of configuration X   R_X = Σ_i ((computed_i − emu_X,i) / β_i)²
//   null statistic of run m       Q_m = Σ_i ((emu_m,i − emu_D,i) / β_i)²
// where emu_X is the deterministic emulation of X (emulation.h), D the contract as declared
// and emu_m a Monte Carlo run of D (every fp32 rounding and transcendental randomized within
// what the contract allows). The best allowed configuration A minimizes R_X; a slice (the
// whole tensor, or one head) is SUSPICIOUS when R_A > κ·mean(Q) and Cantelli's bound
// 1/(1 + z²), z = (R_A − mean(Q)) / (c_M·sd(Q)), times the number of slices is at most α.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "spec/problem.h"
#include "verify/judge/check_result.h"
#include "verify/judge/external_check.h"
#include "verify/judge/judging_feed.h"

namespace ssmv::sharp {

struct SharpOptions {
  int runs = 8;                // Monte Carlo runs of the declared contract (>= 3)
  double margin = 4.0;         // κ: the unexplained error energy must exceed κ × the null's mean
  double false_alarm = 1e-3;   // α: flagged with at most this probability when the kernel is a
                               // draw of the contract's rounding model (docs/sharp-verdicts.md)
  uint64_t seed = 20261203;    // the runs' root seed: the same dump gives the same report
  int threads = 0;             // 0: every core; results identical for any count
  bool attribute = true;       // rank the candidate defects for SUSPICIOUS and VIOLATION tensors
};

// Throws std::invalid_argument naming the option: runs < 3, margin <= 1, false_alarm outside (0, 1).
void validate(const SharpOptions& o);

// Fills kc.tensors[i].sharp for y and final_state of an external kernel's check `kc` (made
// with ElementDetail::sharp_weights or ::elements: a weight per element). A hand-off, a
// block-scaled state or a tensor without per-element weights is marked not evaluated, with the
// reason.
void sharp_verdicts(const Problem& p, const verify::ExternalKernel& k, verify::KernelCheck& kc,
                    const FormatValues& y, const FormatValues& final_states, const SharpOptions& o);

// The same verdicts with their first pass beside the check: the declared emulation and the
// Monte Carlo runs (most of the verdict's work) start now, on threads of their own, and read
// each row's weights once the check's judging has written them (`feed`, given to check_external
// with ElementDetail::sharp_weights or ::elements), so that they run while the reference leaves
// cores idle (a dump of 8 (sequence, head) pairs gives a 16-core reference 8 tasks) instead of
// after it. The same figures, bit for bit, as sharp_verdicts after the check: the same weights,
// the same sums in the same order. Usage:
//   JudgingFeed feed(S·H);
//   SharpBeside sharp(p, k, y, final_states, o, feed);
//   KernelCheck kc = check_external(p, k, y, final_states, ElementDetail::sharp_weights, nullptr, nullptr, &feed);
//   sharp.finish(kc);
// Everything passed must outlive the object. A check that throws closes the feed unfinished:
// the first pass stops, and the destructor waits for it.
// Whether the first pass pays beside the check: when the reference's (sequence, head) pairs
// are fewer than its workers, cores idle while it runs (8 pairs on 16 workers: 6–10 of 16 busy)
// and the pass fills them (1 × 16,384 and 1 × 65,536 tokens, H 8, 16 cores: 22–35 % less wall
// time, peak RSS +10–53 MB); otherwise the reference keeps the cores busy, and the pass beside
// it would mostly hold its working sets at the same time as the reference's (chunk_scan
// 1 × 8192 H 32: −0 to −10 % wall, peak RSS 228 → 307 MB), so it runs after the check
// (sharp_verdicts). bench/NOTES.md, session 30.
bool first_pass_beside_pays(const Problem& p, int reference_workers);

struct SharpPasses;  // sharp_verdict.cpp

class SharpBeside {
 public:
  // `rejudge` (optional): the same check made again, from scratch, with ElementDetail::
  // sharp_weights. With it the first pass gives the y weights (2 bytes per y element) back to
  // the system behind its slowest reader (JudgingFeed::release_behind_readers), and only a
  // tensor that the declared emulation leaves SUSPICIOUS, or one with a VIOLATION, whose later
  // passes read the weights again, costs that second check.
  SharpBeside(const Problem& p, const verify::ExternalKernel& k, const FormatValues& y,
              const FormatValues& final_states, const SharpOptions& o, verify::JudgingFeed& feed,
              std::function<verify::KernelCheck()> rejudge = {});
  ~SharpBeside();
  SharpBeside(const SharpBeside&) = delete;
  SharpBeside& operator=(const SharpBeside&) = delete;
  // After the check returned kc: waits for the first pass (rethrowing its error), then decides
  // and, for a flagged tensor, emulates the other allowed configurations and the candidate
  // defects, as sharp_verdicts does. Call once.
  void finish(verify::KernelCheck& kc);

 private:
  std::unique_ptr<SharpPasses> passes_;
};

// True when some tensor of kc is SUSPICIOUS.
bool any_suspicious(const verify::KernelCheck& kc);

}  // namespace ssmv::sharp
