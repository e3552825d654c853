// Where a bound comes from: every term of the bounds of verify/bound/ is tagged with one
// BoundSource, so one element's bound splits exactly into per-source parts (attribution.h),
// and SourceWeights can scale the sources (what-if: weight 0 drops a source; a bound with a
// weight below 1 is no longer rigorous). docs/bounds.md §5.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ssmv::bound {

enum class BoundSource : uint8_t {
  // The contract's rounding points (spec/contract.h Point): a value rounded to a format
  // coarser than the accumulation. `output` is the final rounding of y to the output
  // format; `stored_state` the rounding of a stored state to the state format.
  dt_scaled_B, decayed_CB, incoming_state, final_incoming_state, stored_state, output,
  // The transcendental budgets.
  exp, softplus, sigmoid,
  // The reductions, per Sum (the roundings of the sum's additions, and the D·x addition of y).
  sum_cumsum, sum_chunk_state, sum_state_passing, sum_cb, sum_y,
  arithmetic,     // the other roundings in the accumulation format: dt + dt_bias, δ·A, the
                  // update's products and sum, the scale and weight products, D·x, the gate
  initial_error,  // the error of the state a sequence starts from (a hand-off's)
  underflow,      // the absolute floors η below the normal range (every format)
};
inline constexpr size_t kBoundSources = size_t(BoundSource::underflow) + 1;

// "dt_scaled_B", ..., "output", "exp", "softplus", "sigmoid", "sum:cumsum",
// "sum:chunk_state", "sum:state_passing", "sum:CB", "sum:y", "arithmetic", "initial_error",
// "underflow".
std::string_view bound_source_name(BoundSource s);

// Which bound of an element: y [T, H, P]; the states [S, H, P, N] — sequential: `state`
// (before the final store) and `stored_state`; chunked: `final_state_fp32` (before the
// store) and `final_state`; `boundary_state` [pieces, H, P, N] (chunked).
enum class BoundOf : uint8_t { y, state, stored_state, final_state, final_state_fp32, boundary_state };

// One multiplier per source (default all 1: the rigorous bound).
struct SourceWeights {
  std::array<double, kBoundSources> w;
  SourceWeights() { w.fill(1.0); }
  double operator[](BoundSource s) const { return w[size_t(s)]; }
  double& operator[](BoundSource s) { return w[size_t(s)]; }
};

// The reference's y at one element [t, h, p], as the bounds read it (its output rounding and
// gate terms): what a streamed check has of an element instead of the inputs' y vectors
// (SequentialPairBound::step, ChunkedYBound, attribution.h).
struct YElement {
  double exact = 0;            // nearest double of y
  double certified_error = 0;  // its certified error
  double ungated = 0;          // nearest double of y before the gate
};

}  // namespace ssmv::bound
