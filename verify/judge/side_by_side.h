// Two kernels' outputs on the same problem, side by side: "why do two algebraically
// equivalent kernels disagree?". Each is judged against the exact value (their own
// KernelChecks); here, per element, their divergence |a − b| is compared with
// bound_a + bound_b. Within it the divergence is *explained*: both may be honest rounding
// paths. Beyond it, at least one of them is outside its contract (by the triangle
// inequality |a − b| ≤ |a − exact| + |b − exact|), and the per-kernel verdicts say which.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "spec/problem.h"
#include "verify/judge/check_result.h"
#include "verify/judge/tensor_report.h"

namespace ssmv::verify {

// One element where the two kernels differ, with everything needed to see why.
struct DivergentElement {
  int64_t index = -1;           // flat index; -1: none
  std::vector<int64_t> coords;  // named by SideBySideTensor::coord_names
  Bits a = 0, b = 0;            // the two kernels' bit patterns
  double exact = 0;             // nearest double of the exact value
  double bound_a = 0, bound_b = 0;
  double divergence = 0;        // |a − b| (upper bound; +inf when exactly one is not finite)
  double usage = 0;             // divergence / (bound_a + bound_b)
};

struct SideBySideTensor {
  std::string name;  // "y", "final_state"
  Format format = Format::fp32;
  std::vector<std::string> coord_names;
  int64_t elements = 0;
  int64_t identical = 0;    // same bit pattern
  int64_t explained = 0;    // different, |a − b| ≤ bound_a + bound_b
  int64_t unexplained = 0;  // |a − b| > bound_a + bound_b, or only one of them finite
  int64_t ulp_max = 0;      // largest ULP distance between a and b (finite pairs)
  // Largest |a − b| over the element's scale (the reference's magnitude, Σ|terms|): ULP
  // distances mean nothing near zero, where a state of a correct kernel pair can differ by
  // 1.9e9 ULPs (a sign change across the subnormals) at 1e-6 of its scale.
  double max_divergence_over_scale = 0;
  double max_usage = 0;     // max |a − b| / (bound_a + bound_b) over differing elements
  Verdict verdict_a = Verdict::exact, verdict_b = Verdict::exact;  // each against the exact value
  double bound_usage_a = 0, bound_usage_b = 0;
  DivergentElement worst;   // the worst unexplained element, else the largest usage

  bool explained_all() const { return unexplained == 0; }
};

struct SideBySide {
  std::string name;  // e.g. "chunk_scan vs SSU on the same tokens"
  std::string kernel_a, contract_a, device_a;
  std::string kernel_b, contract_b, device_b;
  std::vector<SideBySideTensor> tensors;
  bool explained_all() const;
};

// How one tensor's elements are set side by side: its layout (names the worst element's flat
// index) and, for a circular quantity, its period: an angle (a Mamba-3 angle state, period 2π)
// is a point on the circle, so two kernels that keep it in [0, 2π) may hold 0.001 and 6.282 for
// nearly the same angle; their divergence is taken modulo the period. 0: not circular.
struct ElementMap {
  TensorLayout layout;
  double period = 0;
};

// Compares one tensor of two checks (same name, format and size; else
// std::invalid_argument).
SideBySideTensor compare_tensors(const TensorReport& a, const TensorReport& b, const ElementMap& map);

// Compares the tensors both checks have under the same name; `maps` is parallel to a.tensors
// (the family's layouts, verify/family/family.h CheckedDump::element_maps). Throws
// std::invalid_argument when they share none.
SideBySide side_by_side(std::string name, const KernelCheck& a, const KernelCheck& b, const std::vector<ElementMap>& maps);

// Mamba2's: y with y_layout, states with state_layout.
SideBySide side_by_side(std::string name, const KernelCheck& a, const KernelCheck& b, const Problem& problem);

// The distance of two values of a tensor compared side by side: |a − b|, or for a circular one
// ||a − b| − k·period| with the whole number of turns k ≥ 0 that makes it least, rounded up (an
// upper bound on the exact distance); +inf when either is not finite. `k` receives k.
double divergence(double a, double b, double period, int64_t* k = nullptr);

}  // namespace ssmv::verify
