// Relations between two kernel runs, element by element: "agree within the sum of their
// bounds" (|a − b| ≤ bound_a + bound_b + extra, each bound on the distance from the same
// exact value, so the triangle inequality makes the sum a bound on their distance) and
// "give exactly the same bits".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fast/chunk_scan/chunk_scan.h"
#include "properties/harness/case_failure.h"
#include "reference/reference.h"
#include "verify/bound/chunked_bound.h"

namespace ssmv::prop {

// A chunk_scan twin run with the chunked bound of each of its outputs.
struct BoundedRun {
  chunk_scan::Result result;
  bound::ChunkedBounds bounds;
};
// `exact` is ref::compute(p).
BoundedRun run_bounded(const Problem& p, const ref::ExactResult& exact, chunk_scan::ContractKind kind,
                       int64_t chunk_size);

// First element i whose encodings differ and |a[i] − b[i]| > bound_a[i] + bound_b[i] + extra[i]
// (extra may be empty: zeros). Equal encodings agree (two runs overflowing to the same Inf). The difference is computed in double and nudged up by 2^-52 relative, so it
// bounds the true difference of the two floats.
std::optional<CaseFailure> agree_within(const std::string& what, const std::vector<float>& a,
                                        const std::vector<double>& bound_a, const std::vector<float>& b,
                                        const std::vector<double>& bound_b,
                                        const std::vector<double>& extra = {});

// First element whose encodings differ (+0 and −0 differ; NaN patterns compared as bits).
std::optional<CaseFailure> same_bits(const std::string& what, const std::vector<float>& a,
                                     const std::vector<float>& b);
std::optional<CaseFailure> same_bits(const std::string& what, const std::vector<Bits>& a,
                                     const std::vector<Bits>& b);

}  // namespace ssmv::prop
