// The verdicts of one output tensor, summarised: counts by verdict, ULP distances, bound
// usage and the worst element with everything needed to act on it.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "reference/reference.h"
#include "verify/judge/sharp_result.h"
#include "verify/judge/sharp_weight.h"
#include "verify/judge/tensor_layout.h"
#include "verify/judge/verdict.h"

namespace ssmv::verify {

struct WorstElement {
  int64_t index = -1;                 // flat index into the tensor
  std::vector<int64_t> coords;        // named by TensorReport::coord_names
  Bits computed = 0;
  Bits exact_rounded = 0;
  double exact = 0;                   // nearest double of the exact value
  std::string exact_decimal;          // the exact value, 40 significant digits
  double bound = 0;
  ElementJudgement judgement;
};

// One element's figure with where it is (torch.testing.assert_close's "greatest absolute
// difference: ... at index ...").
struct DifferenceAt {
  int64_t index = -1;           // flat index; -1 when no element qualified
  std::vector<int64_t> coords;  // named by TensorReport::coord_names
  double value = 0;
};

// One source's share of a bound (verify/bound/attribution.h).
struct BoundShare {
  std::string source;  // bound_source_name: "decayed_CB", "exp", "sum:y", ...
  std::string label;   // with its format or order: "decayed_CB (bf16)", "sum:y (mma_m16n8k16)"
  double share = 0;    // of the worst element's bound; the shares sum to 1
};

constexpr size_t kKeptBadElements = 32;

struct TensorReport {
  std::string name;                     // "y", "final_state", ...
  Format format = Format::fp32;
  std::vector<std::string> coord_names; // e.g. {"sequence", "token", "head", "dim"}
  int64_t elements = 0;
  std::array<int64_t, 4> counts{};      // indexed by Verdict
  int64_t ulp_p50 = 0, ulp_p99 = 0, ulp_max = 0;  // over valid elements
  double max_bound_usage = 0;           // max error / bound
  WorstElement worst;                   // INVALID first, then the largest bound usage
  // The tensor's own shape as a dump holds it (y [T, H, P], a state [S, H, P, N]; the flat
  // index runs over it in row-major order), for indices in the tensor's own rank.
  std::vector<int64_t> dims;
  // The worst bad (VIOLATION or INVALID) elements, worst first, at most kKeptBadElements
  // (INVALID first, then the largest bound usage; equal ones in flat order): what the
  // terminal and the Markdown report list. exact_decimal is left empty.
  std::vector<WorstElement> bad;
  // Over the elements whose computed value is finite: the greatest |computed − exact| and
  // |computed − exact| / |exact| (+inf when exact is 0 and computed is not), with the
  // exact value as its nearest double.
  DifferenceAt max_abs_difference, max_rel_difference;
  // The same difference in units of the element's scale (the reference's magnitude: the
  // recurrence on absolute values, Σ|terms|), where ULP counts near zero mean nothing:
  // the greatest |computed − exact| / magnitude (+inf where the magnitude is 0 and the
  // difference is not), and the greatest |computed − exact| / ulp(magnitude) in `format`
  // ("ULPs at scale"), each with where it is.
  DifferenceAt max_err_over_scale, max_ulps_at_scale;
  // Per element, in the tensor's flat order (filled by judge_tensor): what side-by-side
  // comparisons and failure messages need beyond the summary.
  std::vector<Bits> computed;          // the kernel's bit patterns in `format`
  std::vector<double> exact_nearest;   // the exact value's nearest double
  std::vector<double> bounds;          // the contract's bound on |computed − exact|
  // The sharp verdict's weights: each bound rounded to bf16 (verify/judge/sharp_weight.h).
  SharpWeights sharp_weights;
  std::vector<double> scales;          // the reference's magnitude (the element's scale)
  // How the worst element's bound splits over its sources, largest first (empty: not
  // attributed, e.g. a bound of 0 or a report made without the bound's inputs).
  std::vector<BoundShare> worst_bound_sources;
  // The sharp verdict beside the rigorous one (evaluated = false: not run, or not
  // applicable with why_not saying why); verify/sharp/sharp_verdict.h fills it.
  SharpResult sharp;

  int64_t count(Verdict v) const { return counts[size_t(v)]; }
  bool ok() const { return count(Verdict::violation) == 0 && count(Verdict::invalid) == 0; }
  // The worst verdict present: INVALID > VIOLATION > WITHIN_CONTRACT > EXACT.
  Verdict overall() const;
};


// The bit patterns of `values` in `f` (values of the format, NaN and Inf included, encode
// exactly; round-to-nearest-even is the encoding).
std::vector<Bits> format_bits(Format f, const std::vector<float>& values);

// Judges every element of `computed` (bit patterns in `format`) against `exact` with
// per-element `bounds`, the tensor laid out as `layout` says (verify/judge/tensor_layout.h).
TensorReport judge_tensor(const std::string& name, Format format, const std::vector<Bits>& computed,
                          const ref::ExactValues& exact, const std::vector<double>& bounds, TensorLayout layout);

}  // namespace ssmv::verify
