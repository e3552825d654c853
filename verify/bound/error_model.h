// The floating-point error model every bound of verify/bound/ is written in
// (docs/bounds.md §1; Higham, Accuracy and Stability of Numerical Algorithms, ch. 2–3).
#pragma once

#include <cstdint>
#include <string_view>

#include "spec/contract.h"
#include "spec/format.h"
#include "spec/problem.h"

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

// Largest error of reading one operand of an accumulation-format operation: 0 with gradual
// underflow; 2^-126 in fp32 when the contract flushes subnormals (CUDA's -use_fast_math, i.e.
// -ftz=true, flushes subnormal inputs of every fp32 operation as well as its results: an
// operand below 2^-126 may be read as ±0). The bounds multiply it by the operand's partners.
double flushed_operand_floor(const Contract& c);

// Relative margin of the bounds' double recurrence of the state (sequential_bound.cpp):
// Ŝ_t = fl(fl(â·Ŝ_{t-1}) + fl(fl(δ̂·B)·x)) run on the reference's nearest doubles â, δ̂
// (each within 2^-52 relative of the exact value: half a double ULP plus the certified
// 2^-64), from a start within 2^-52 of the exact state. With u = 2^-53 one step multiplies
// the previous error by â(1 + γ_4) and adds γ_5·(a·Sabs_{t-1} + |δBx|) = γ_5·Sabs_t, and
// Sabs_t ≥ a_t·Sabs_{t-1}, so after `steps` steps
//   |Ŝ − S| ≤ m·Sabs,  m = γ_5·(steps + 2)·(1 + γ_4)^steps,
// where Sabs is the recurrence on absolute values. The bound computes Sabs the same way in
// double, within the same relative m, so |Ŝ − S| ≤ m/(1 − m)·Sabs_double: the value
// returned. (Below double's normal range, 2^-1022, the absolute errors of at most 2^-1074
// per operation are dwarfed by the η ≥ 2^-150 the bounds add at every step.)
double double_recurrence_margin(int64_t steps);

// An upper bound of |v| from the reference's nearest double of v and its certified error
// (reference/reference.h ExactValues): |v| ≤ |nearest|·(1 + 2^-53) + certified_error, and
// the factor 1 + 2^-52 also covers the rounding of this product.
inline double exact_abs_upper(double nearest, double certified_error) {
  return (nearest < 0 ? -nearest : nearest) * (1 + 0x1p-52) + certified_error;
}

// Half an ULP of the format at any value of magnitude at most `magnitude` (ulp_of is
// non-decreasing in |v|): the error of rounding such a value to nearest in `f`.
double half_ulp_at_most(Format f, double magnitude);

// No block magnitude given: the caller rounds to an IEEE format (a block-scaled format needs one).
inline constexpr double kNoBlock = -1;

// Largest error of one rounding of a value of magnitude at most `magnitude` to `f` in `mode`:
// half an ULP to nearest, a whole ULP stochastically (the result is one of the value's two
// neighbours, whose spacing is the ULP at the value, at most the ULP at `magnitude`) — or the
// value itself below the format's smallest normal, which a stochastic rounding may flush to
// zero (FlashInfer's software fallback cvt_rs_f16_sw writes 0 for every |v| < 2^-14 in fp16):
// max(ulp, min(magnitude, 2^emin)), the flush counted only when `magnitude_lo` (a lower bound
// of |value|, 0 when none is known) lies below 2^emin.
// A block-scaled format (spec/format.h int16_scaled) rounds to nearest only and needs
// `block_magnitude`, an upper bound of the largest |value| of the element's block (the state
// row): scaled_rounding_error. Throws std::invalid_argument for a block-scaled format without
// it, or rounded stochastically.
double rounding_error_at_most(Format f, RoundingMode mode, double magnitude, double magnitude_lo = 0,
                              double block_magnitude = kNoBlock);

// The store of an fp32 value s, |s| ≤ `magnitude`, to a block-scaled format whose block's
// largest |value| is at most `block_magnitude` M, read back as the decoded fp32 value
// (docs/contracts.md "Scaled 16-bit integer states"; FlashInfer
// kernel_selective_state_update_stp.cuh:253-275, ssu_mtp_common.cuh:170-197, conversion.cuh:87-93):
// the kernel computes M̃ = max|s| of the row, e = c/M̃ (c = scaled_code_max; div.approx: 2 ULP,
// 2^-22 relative), d = 1/e (rcp.approx: 2^-23 relative, bounded by 2^-22), q = rint(clip(fl(s·e),
// ±c)), and a reader fl(q·d). Then, with d ≤ M/c·(1 + 2^-20):
//   |fl(q·d) − s| ≤ (½ + c·2^-20)·d   the integer rounding (½) plus, in quanta, the product
//                                      fl(s·e) (c·2^-24), the clip past c (≤ c·2^-21) and the
//                                      decoding product fl(q·d) (c·2^-24)
//                 + 2^-22·|s|          e·d = 1 + ε, |ε| ≤ 2^-22
//                 + 2^-126·(1 + d)     flush to zero of s·e or of the decoded value (-ftz)
//                 + min(M, 2^-112)     a row below 2^-113 has e = +Inf, d = 0: everything decodes to 0
// Valid for rows with M < 2^126, where div.approx has its 2-ULP bound; +Inf (no bound) above.
double scaled_rounding_error(Format f, double magnitude, double block_magnitude);

// [2.6], [2.8], [3.9] The store of a value of magnitude at most `magnitude` to `storage` (the
// problem's state or output format) at `point` (Point::stored_state or Point::output): its own
// rounding — stochastic when the contract declares the point stochastic in the storage format
// itself — plus declared_rounding_error. The one place the bounds round a stored value.
// `block_magnitude` as for rounding_error_at_most (a block-scaled state).
double store_rounding_error(const Contract& c, Point point, const Formats& f, Format storage, double magnitude,
                            double magnitude_lo = 0, double block_magnitude = kNoBlock);

// [2.6], [2.8], [3.9] The contract's rounding at `point` (Point::stored_state or
// Point::output) when it declares one to a format other than `storage` (the problem's state
// or output format) and coarser than the accumulation: the value is rounded there first and
// then stored, so half an ULP of that format (a whole one when declared stochastic) adds to the
// storage's rounding. 0 when the contract declares none, or one to the storage format itself.
double declared_rounding_error(const Contract& c, Point point, const Formats& f, Format storage, double magnitude);

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
