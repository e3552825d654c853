// The floating-point error model every bound of verify/bound/ is written in
// (docs/bounds.md §1; Higham, Accuracy and Stability of Numerical Algorithms, ch. 2–3).
#pragma once

#include <cstdint>
#include <string_view>

#include "spec/contract.h"
#include "spec/format.h"

namespace ssmv::bound {

// Every bound is multiplied by this factor at the end. It covers the second-order terms
// that first-order running error analysis drops (products of two error terms, each below
// ~2^-20 relative for the problems ssmv accepts) and the double-precision rounding of the
// bound computation itself (a few hundred operations per element, each 2^-53 relative).
inline constexpr double kSafetyFactor = 1.0 + 0x1p-10;

// γ_k = k·u / (1 − k·u): the relative error of k successive roundings of unit roundoff u.
double gamma(int64_t k, double u);

// Roundings any product term of a `length`-term sum of products passes under `r`: the
// reduction's depth (spec/contract.h reduction_depth), plus one for a tree, whose products
// are rounded before the first addition (sequential fma fuses it, mma's products are exact,
// any_order's depth counts it).
int64_t product_sum_roundings(const Reduction& r, int64_t length);

// Largest absolute error one rounding of a tiny result can add on top of the relative
// part: half the subnormal spacing (2^-150 in fp32), or the whole normal range below the
// smallest normal (2^-126 in fp32) when subnormals are flushed to zero.
double underflow_floor(Format accumulation, bool flush_to_zero);

// Half an ULP of the format at any value of magnitude at most `magnitude` (ulp_of is
// non-decreasing in |v|): the error of rounding such a value to nearest in `f`.
double half_ulp_at_most(Format f, double magnitude);

// |computed − exact| allowed by a transcendental's budget at argument `arg` for an exact
// result of magnitude at most `value_magnitude` (fp32 ULPs; spec/contract.h). The kernel
// evaluates it at an argument within `arg_error` of `arg`: the ULPs that grow with |arg|
// are taken at |arg| + arg_error. Throws std::invalid_argument when `arg` lies outside the
// budget's range.
double transcendental_error(const TranscendentalBudget& b, double arg, double value_magnitude,
                            double arg_error = 0.0);

// The contract's budget for `function`; throws std::invalid_argument naming the contract
// and the function when it has none (an evaluation the contract does not describe cannot
// be bounded).
const TranscendentalBudget& budget(const Contract& c, std::string_view function);

}  // namespace ssmv::bound
