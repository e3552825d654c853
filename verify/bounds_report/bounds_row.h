// One row of `ssmv bounds`: a contract on one problem of the grid — the bound of every output
// element (verify/bound/, the one implementation) beside the certified exact values, summarised
// per tensor (y, the stored final state): relative bound, bound in ULPs, which sources make it
// up (verify/bound/attribution.h at the p50, p99 and max elements), the error of the bundled
// twin that implements the contract where there is one, and the allclose tolerances that would
// accept the kernel against an fp32 reference (verify/allclose/).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "reference/reference.h"
#include "spec/contract.h"
#include "spec/problem.h"
#include "verify/allclose/allclose.h"
#include "verify/allclose/fp32_reference.h"
#include "verify/bound/attribution.h"
#include "verify/bounds_report/percentiles.h"
#include "verify/family/family.h"

namespace ssmv::verify {

// The rtol values of the tolerance frontier: the smallest atol is given at each.
inline constexpr double kFrontierRtols[] = {0.0, 3e-4, 1e-3, 1e-2};

// The smallest allclose (rtol, atol) pairs against the fp32 reference for some per-element
// deviations, and what mamba_ssm's tolerance for the output format makes of them.
struct ToleranceFrontier {
  std::vector<std::pair<double, double>> atol_at_rtol;  // (rtol of kFrontierRtols, smallest atol)
  double rtol_at_atol0 = 0;                             // the smallest rtol with atol = 0
  Tolerance mamba;                                      // mamba_ssm_tolerance(format)
  int64_t mamba_violations = 0;                         // elements allclose fails at `mamba`
};
ToleranceFrontier tolerance_frontier(const std::vector<double>& deviation, const std::vector<double>& ref,
                                     Format format);

// One element's bound split over its sources.
struct SourcesAt {
  std::string at;      // "p50", "p99", "max": its rank in bound ÷ scale
  int64_t index = -1;  // flat index in the tensor
  double bound = 0;    // the bound the report summarises
  double parts_sum = 0;  // the attribution's parts summed: the same bound (up to ~1e-15 relative)
  std::vector<bound::SourceShare> shares;  // largest first
};

struct TensorBounds {
  std::string name;  // "y", "final_state"
  Format format{};
  int64_t elements = 0;
  int64_t zero_exact = 0;  // elements whose exact value is 0 (left out of the ÷|exact| ratios)
  // bound ÷ |exact|, bound ÷ scale (the magnitude Σ|terms| the verdicts use, ExactValues::
  // magnitude), bound in ULPs of the format at |exact| and at the scale.
  Percentiles bound_over_exact, bound_over_scale, bound_ulps, bound_ulps_at_scale;
  std::vector<SourcesAt> sources;  // at the p50, p99 and max elements of bound ÷ scale
  // The fp32 reference's own error: |fp32 − exact| ÷ scale.
  Percentiles fp32_error_over_scale;
  // Tolerances that accept every kernel honouring the contract: per element the deviation
  // from the fp32 reference such a kernel may reach, bound + |exact − fp32| (+ the exact
  // value's certified error and double rounding, as verify/judge/verdict.h).
  ToleranceFrontier guaranteed;
  // What mamba_ssm's tolerance lets an element deviate from the fp32 reference, atol + rtol·|ref|,
  // over the element's bound: how many times its bound a wrong value may be off and still
  // pass allclose.
  Percentiles mamba_allowed_over_bound;
  // The twin (when `measured`): its error as the verdicts compute it (verify/judge/verdict.h),
  // ÷ |exact|, ÷ scale, and ÷ bound (usage); elements above the bound (VIOLATION: a finding)
  // and elements equal to the correctly rounded value; its allclose frontier.
  bool measured = false;
  Percentiles error_over_exact, error_over_scale, usage;
  int64_t over_bound = 0, exact_elements = 0;
  ToleranceFrontier measured_tolerance;
};

struct BoundsRow {
  std::string contract;
  Family family{};
  std::string twin;       // the twin measured ("ssu", "chunk_scan"), empty when none
  std::string twin_note;  // why none
  int64_t T = 0, N = 0, P = 0, H = 0, G = 0, chunk_size = 0;  // chunk_size 0: sequential
  Formats formats;
  std::vector<TensorBounds> tensors;  // y, final_state
  double bound_seconds = 0, twin_seconds = 0;  // wall time: the bounds with attribution and summaries; the twin
};

// A row of another recurrence family (verify/family/family.h: Mamba-3's presets), summarised as
// the rows above: the bound's ratios and ULPs, and the usage of what the family measured.
struct FamilyTensorBounds {
  std::string name;
  Format format{};
  int64_t elements = 0;
  int64_t zero_exact = 0;
  Percentiles bound_over_exact, bound_over_scale, bound_ulps, bound_ulps_at_scale;
  bool measured = false;
  Percentiles usage;
  int64_t over_bound = 0;
};

struct FamilyRow {
  std::string family;                // "mamba3"
  std::string contract, kernel;      // a preset of the family, the kernel it describes
  std::string measured, note;        // what the usage measures; why nothing is
  int64_t T = 0, N = 0, P = 0, H = 0, G = 0, chunk_size = 0;  // chunk_size 0: not chunked
  Formats formats;
  std::vector<FamilyTensorBounds> tensors;
  double bound_seconds = 0, measured_seconds = 0;  // summed over the family's workers
};

// `row` of family `family` on problem `q`, summarised.
FamilyRow family_row(const std::string& family, const family::BoundsRow& row, const family::BoundsProblem& q);

// The row of contract `c` on problem `p` (one of the grid's, its exact result and fp32
// reference computed once for every contract). Threads: ref::default_threads(), as every
// check. Throws std::invalid_argument as the bounds do (a budget out of range).
BoundsRow bounds_row(const Problem& p, const ref::ExactResult& exact, const Fp32Reference& fp32, const Contract& c);

}  // namespace ssmv::verify
