// The calibrated SUSPICIOUS test of one tensor (docs/sharp-verdicts.md), whatever produced its
// energies: per allowed configuration of the contract and per head, the residual energy
// Σ_i ((computed_i − emulated_i)/w_i)² of the kernel against that configuration's emulation, and
// per Monte Carlo run of the declared contract the same of the run against the deterministic
// emulation. Shared by the families: Mamba2's verify/sharp/sharp_verdict.h, Mamba-3's
// verify/family/mamba3/sharp.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "verify/judge/sharp_result.h"
#include "verify/sharp/sharp_verdict.h"  // SharpOptions

namespace ssmv::sharp {

// The sum of v (a tensor's energy from its heads'), in index order.
double total(const std::vector<double>& v);

// Fills r (evaluated, the allowed configuration that fits best, the whole tensor's and the
// worst head's slices, SUSPICIOUS, the Bonferroni p bound, the calibration) from
//   e[c][h]     the residual energy of allowed configuration c (named allowed[c]) in head h,
//   null[m][h]  Monte Carlo run m's energy against the deterministic emulation in head h,
//   elements[h] the elements counted in head h (a head without any is no slice).
// A slice is SUSPICIOUS when its ratio observed/mean(null) exceeds o.margin and Cantelli's bound,
// with the runs' standard deviation raised to its 99.9% upper confidence limit, times the
// number of slices is at most o.false_alarm.
void decide(verify::SharpResult& r, const std::vector<std::string>& allowed, const std::vector<std::vector<double>>& e,
            const std::vector<std::vector<double>>& null, const std::vector<int64_t>& elements, const SharpOptions& o);

// Ranks candidate defects (docs/sharp-verdicts.md §4) into r.attribution, best first: candidate
// d, named names[d] with descriptions[d], left the residual energy residuals[d] over the whole
// tensor; explained = 1 − residual / r.whole.observed, consistent when the residual is within the
// margin of the noise (residual ≤ o.margin · r.whole.null_mean). r must be decided first.
void attribute(verify::SharpResult& r, const std::vector<std::string>& names,
               const std::vector<std::string>& descriptions, const std::vector<double>& residuals,
               const SharpOptions& o);

}  // namespace ssmv::sharp
