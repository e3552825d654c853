// Per-element error bounds for the chunked family (chunk_scan: the chunked SSD prefill).
// Derivation: docs/bounds.md §3 (both chunk layouts of spec/contract.h ChunkLayout).
#pragma once

#include <vector>

#include "spec/contract.h"
#include "spec/problem.h"
#include "verify/bound/source.h"

namespace ssmv::bound {

struct ChunkedInput {
  const Problem* problem = nullptr;
  const Contract* contract = nullptr;            // family chunked, chunk_size > 0
  const std::vector<double>* delta = nullptr;    // [T, H] exact δ (reference, nearest doubles)
  const std::vector<double>* y_exact = nullptr;  // [T, H, P] exact y (reference)
  const std::vector<double>* y_ungated = nullptr;  // [T, H, P] exact y before the gate
  const std::vector<double>* y_certified_error = nullptr;  // [T, H, P] of y_exact (ExactValues)
  // Optional multipliers of the bound's sources (verify/bound/source.h; null: all 1, the
  // rigorous bound).
  const SourceWeights* weights = nullptr;
  // Worker threads (>= 1) over the heads of each piece and the rows of C·Bᵀ; the bounds are
  // identical for any count. Checks pass ref::default_threads() (verify/judge/exact_bounds.cpp).
  int threads = 1;
  // Multiply-adds of a piece's step per worker thread (2^22: a few milliseconds), so that
  // the many small pieces of short sequences do not each pay for starting threads.
  int64_t work_per_thread = int64_t(1) << 22;
};

struct ChunkedBounds {
  std::vector<double> y;                // [T, H, P] on |ŷ − y| in the output format
  // [pieces, H, P, N] on the state after each piece (a sequence's share of a chunk; with
  // chunk_layout sequence the chunks themselves), stored; sequences in order.
  std::vector<double> boundary_state;
  std::vector<int64_t> boundary_positions;  // [pieces] packed position q ending each piece
  std::vector<double> final_state;      // [S, H, P, N] on the stored final state
  std::vector<double> final_state_fp32; // [S, H, P, N] on the fp32 state before the store
};

// Throws std::invalid_argument when the contract cannot bound this problem: a family other
// than chunked, a budget missing or out of range, or A > 0 (the chunked algorithm's
// exp(min(·, 0)) guard then computes a different function than the recurrence).
ChunkedBounds chunked_bounds(const ChunkedInput& in);

}  // namespace ssmv::bound
