// Per-element error bounds for the sequential (decode, SSU) family: running error analysis
// of the recurrence token by token. Derivation: docs/bounds.md §2.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "spec/contract.h"
#include "spec/problem.h"
#include "spec/token_head_column.h"
#include "verify/bound/source.h"

namespace ssmv::bound {

struct SequentialInput {
  const Problem* problem = nullptr;
  const Contract* contract = nullptr;        // family sequential
  TokenHeadColumn delta;  // [T, H] exact δ (the reference's nearest doubles)
  TokenHeadColumn decay;  // [T, H] exact exp(δ·A)
  // [T, H, P] the reference's y: nearest doubles of y and of y before the gate, and y's
  // certified error (reference/reference.h ExactValues).
  const std::vector<double>* y_exact = nullptr;
  const std::vector<double>* y_certified_error = nullptr;
  const std::vector<double>* y_ungated = nullptr;
  // The exact state each sequence starts from, [S, H, P, N] (empty: problem.initial_state,
  // or zero without one), and a bound on the kernel's error in the state it starts from
  // (empty: zero; a hand-off passes the bound of the state it was handed).
  std::vector<double> initial_state;
  std::vector<double> initial_error;
  // The state's storage cadence [2.6]: a launch processes this many tokens of a sequence,
  // the state carried in the accumulation format within it and stored in the state format at
  // its end (after tokens k·K − 1 of the sequence, and after its last token: a shorter last
  // launch). 1: one launch per token (stored after every token); 0: the whole sequence in one
  // launch (stored once, at its end). FlashInfer's multi-token (MTP) kernel: K = ntokens_mtp.
  int64_t tokens_per_launch = 0;
  // Optional multipliers of the bound's sources (verify/bound/source.h; null: all 1, the
  // rigorous bound).
  const SourceWeights* weights = nullptr;
  // Worker threads (>= 1) over (sequence, head) pairs; the bounds are identical for any
  // count. Checks pass ref::default_threads() (verify/judge/exact_bounds.cpp).
  int threads = 1;
};

struct SequentialBounds {
  std::vector<double> y;             // [T, H, P] bound on |ŷ − y| in the output format
  std::vector<double> state;         // [S, H, P, N] on |Ŝ − S| before the final store
  std::vector<double> stored_state;  // [S, H, P, N] on |Ŝ − S| after the store in the state format
};

// Throws std::invalid_argument when the contract cannot bound this problem (no budget for a
// transcendental it evaluates, an argument outside a budget's range, a non-sequential family).
// Runs one SequentialPairBound per (sequence, head) pair.
SequentialBounds sequential_bounds(const SequentialInput& in);

// The bound of one (sequence, head) pair, token by token: the one implementation of the
// sequential bound. sequential_bounds and the attribution (verify/bound/attribution.h) run
// it over SequentialInput's y vectors; a streamed check (verify/judge/external_check.cpp)
// runs one per pair as the reference hands each token's y over, keeping no vector over the
// tokens.
// The bounds are bit for bit those of sequential_bounds. Memory: O(P·N).
class SequentialPairBound {
 public:
  // `in` as for sequential_bounds (it must outlive this), except that y_exact,
  // y_certified_error and y_ungated are not read: step() is given each token's. Throws
  // std::invalid_argument as sequential_bounds does before its first pair.
  explicit SequentialPairBound(const SequentialInput& in);
  ~SequentialPairBound();
  SequentialPairBound(const SequentialPairBound&) = delete;
  SequentialPairBound& operator=(const SequentialPairBound&) = delete;

  // Starts pair (seq, h) from its initial state and error (a pair may be started again).
  void start(int64_t seq, int64_t h);
  // The pair's next token t (cu_seqlens[seq], then t + 1, ...; else std::logic_error), given
  // the reference's y of (t, h) over the P dims: its nearest doubles, their certified errors
  // and the nearest doubles of y before the gate (ref::TokenOutputs). Writes the P bounds
  // of y[t, h, :] to y_bound. Throws std::invalid_argument as sequential_bounds does.
  void step(int64_t t, std::span<const double> y_exact, std::span<const double> y_certified_error,
            std::span<const double> y_ungated, std::span<double> y_bound);
  // After the sequence's last token (else std::logic_error): the pair's state and
  // stored_state bounds, [P, N] each (SequentialBounds' layout within the pair).
  void finish(std::span<double> state, std::span<double> stored_state);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ssmv::bound
