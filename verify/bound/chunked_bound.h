// Per-element error bounds for the chunked family (chunk_scan: the chunked SSD prefill).
// Derivation: docs/bounds.md §3 (both chunk layouts of spec/contract.h ChunkLayout).
#pragma once

#include <cmath>
#include <vector>

#include "spec/contract.h"
#include "spec/problem.h"
#include "spec/token_head_column.h"
#include "verify/bound/row_handover.h"
#include "verify/bound/source.h"
#include "verify/bound/y_before_dx.h"

namespace ssmv::bound {

struct ChunkedInput {
  const Problem* problem = nullptr;
  const Contract* contract = nullptr;            // family chunked, chunk_size > 0
  TokenHeadColumn delta;                         // [T, H] exact δ (reference, nearest doubles)
  // [T, H, P] the reference's y: nearest doubles of y and of y before the gate, and y's
  // certified error. All three, or none: a streamed check (verify/judge/external_check.cpp)
  // gives none, gets ChunkedBounds::y_before_dx and finishes each y bound with
  // ChunkedYBound as the reference hands the element over.
  const std::vector<double>* y_exact = nullptr;
  const std::vector<double>* y_ungated = nullptr;
  const std::vector<double>* y_certified_error = nullptr;
  // Optional multipliers of the bound's sources (verify/bound/source.h; null: all 1, the
  // rigorous bound).
  const SourceWeights* weights = nullptr;
  // Worker threads (>= 1) over the heads of each piece and the rows of C·Bᵀ; the bounds are
  // identical for any count. Checks pass ref::default_threads() (verify/judge/exact_bounds.cpp).
  int threads = 1;
  // Multiply-adds of a piece's step per worker thread (2^20: about half a millisecond, ten
  // times what starting a thread costs), so that the many small pieces of short sequences do
  // not each pay for starting threads. (2^22 had kept the C·Bᵀ stage of a 256-token chunk,
  // about 2^24 operations, on 4 of 16 workers: the bounds phase of a chunk_scan 1 × 8192 check
  // ran at 8.7 busy cores of 16.)
  int64_t work_per_thread = int64_t(1) << 20;
  // Whether ChunkedBounds::boundary_state is kept: the bound of the stored state after every
  // piece, pieces·H·P·N doubles (134 MB for 65,536 tokens, 8 heads, P 64, N 128, chunk 256).
  // Only a kernel whose chunk-end states are judged needs it (verify/run/kernel_check.cpp);
  // a dump's check judges y and the final state and turns it off.
  bool boundary_states = true;
  // Set when the bound runs beside the reference (fill_chunked_bounds): rows of y_before_dx
  // are handed to the judging through it, piece by piece, instead of all before the reference.
  RowHandover* handover = nullptr;
};

struct ChunkedBounds {
  std::vector<double> y;                // [T, H, P] on |ŷ − y| in the output format
  // [T, H, P] instead of y when the input holds no y vectors: each element's error before
  // D·x, the gate and the output rounding (the terms that read the reference's y; ChunkedYBound),
  // as a float rounded up (before_dx_kept): 4 bytes per element where a double is 8, 134 MB
  // less at 65,536 tokens of 8 heads. The kept y bound starts from the same rounded value.
  // Released row by row as the judging reads it (y_before_dx.h).
  YBeforeDx y_before_dx;
  // [pieces, H, P, N] on the state after each piece (a sequence's share of a chunk; with
  // chunk_layout sequence the chunks themselves), stored; sequences in order. Empty when the
  // input's boundary_states is off.
  std::vector<double> boundary_state;
  std::vector<int64_t> boundary_positions;  // [pieces] packed position q ending each piece
  std::vector<double> final_state;      // [S, H, P, N] on the stored final state
  std::vector<double> final_state_fp32; // [S, H, P, N] on the fp32 state before the store
};

// y's error before D·x as both y bounds use it: the nonnegative error rounded up to a float
// (never below it; at most 2^-23 of it above, or the smallest subnormal float 2^-149 above
// an error below float's range), so that it is kept in 4 bytes and the streamed and the kept
// bound stay the same bit for bit.
inline float before_dx_kept(double error) {
  float f = static_cast<float>(error);  // nearest
  if (static_cast<double>(f) < error) f = std::nextafterf(f, INFINITY);
  return f;
}

// Throws std::invalid_argument when the contract cannot bound this problem: a family other
// than chunked, a budget missing or out of range, or A > 0 (the chunked algorithm's
// exp(min(·, 0)) guard then computes a different function than the recurrence).
ChunkedBounds chunked_bounds(const ChunkedInput& in);

// The same bounds written into `out` on the calling thread, for a bound that runs beside the
// reference: with in.handover set, each head's rows are handed over after each piece, the
// final-state bounds after each sequence, and a piece waits for room (row_handover.h); no
// progress phase or count of its own (the reference's phase runs meanwhile). If it throws,
// the handover fails first, so that no judging waits for it.
void fill_chunked_bounds(const ChunkedInput& in, ChunkedBounds& out);

// Finishes a streamed y bound: the bound of y element `yi` [t, h, p] from its y_before_dx
// and its own y, bit for bit the y bound chunked_bounds gives when the input holds the y
// vectors (the same terms, bound/chunked_bound.cpp y_tail). Thread-safe; `in` must outlive it.
class ChunkedYBound {
 public:
  explicit ChunkedYBound(const ChunkedInput& in);
  double operator()(int64_t yi, double error_before_dx, const YElement& y) const;

  // What the terms need besides the element: the accumulation's unit roundoff and underflow
  // floor, γ2, the sigmoid budget (null without z).
  struct Terms {
    const Contract* contract = nullptr;  // its output rounding, if declared
    double u = 0, eta = 0, g2 = 0;
    const TranscendentalBudget* b_sig = nullptr;
  };

 private:
  const ChunkedInput& in_;
  Terms terms_;
};

}  // namespace ssmv::bound
