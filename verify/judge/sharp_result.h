// The sharp verdict of one tensor (computed by verify/sharp/sharp_verdict.h, carried by its
// TensorReport into the reports): is the error larger than the contract's own rounding
// model explains, and which extra rounding would explain it? Plain data, no computation.
// The method and its false-alarm probability: docs/sharp-verdicts.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ssmv::verify {

// One candidate explanation of the error: an allowed configuration of the contract (its
// declared roundings, or the declared ones less some: a kernel may round less than it
// declares) or a defect (an extra rounding, a missing term).
struct SharpCandidate {
  std::string name;         // "as declared", "running_state rounded to bf16", ...
  std::string description;  // what a kernel would do to produce it
  double residual = 0;      // Σ_i ((computed_i − emulated_i)/bound_i)² over the tensor
  double explained = 0;     // 1 − residual / (the best allowed configuration's residual)
  bool consistent = false;  // residual within the margin of the noise: explains the error fully
};

// The statistic of one slice of the tensor (a head, or the whole tensor: head −1).
struct SharpSlice {
  int64_t head = -1;
  int64_t elements = 0;
  double observed = 0;   // Σ_i ((computed_i − emulated_i)/bound_i)², the best allowed configuration
  double null_mean = 0;  // the same of the Monte Carlo runs against the deterministic emulation: mean
  double null_sd = 0;    //   and its sample standard deviation
  double ratio = 0;      // observed / null_mean (+inf when null_mean is 0 < observed)
  double p_bound = 1;    // Cantelli's bound on P(a correct kernel's statistic ≥ observed)
};

struct SharpResult {
  bool evaluated = false;
  std::string why_not;         // when not evaluated: why (a hand-off, a block-scaled state, ...)
  bool suspicious = false;     // SUSPICIOUS: some slice's ratio > margin with p_bound·slices ≤ false_alarm
  std::string allowed;         // the allowed configuration that fits best (its name)
  SharpSlice whole;            // the whole tensor
  SharpSlice worst;            // the slice (head) with the largest ratio
  double p_value_bound = 1;    // min over slices of p_bound × slices (Bonferroni), at most 1
  // The calibration: Monte Carlo runs, margin κ, false-alarm probability α, seed, the factor
  // by which the runs' sample standard deviation is raised (its one-sided 99.9% upper
  // confidence limit for this many runs) before Cantelli's bound is applied.
  int runs = 0;
  double margin = 0, false_alarm = 0, sd_factor = 0;
  uint64_t seed = 0;
  std::vector<SharpCandidate> attribution;  // best first (only for a SUSPICIOUS or VIOLATION tensor)
  std::string text() const;  // one line: the verdict, the figures, the best explanation
};

}  // namespace ssmv::verify
