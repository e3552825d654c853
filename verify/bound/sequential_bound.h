// Per-element error bounds for the sequential (decode, SSU) family: running error analysis
// of the recurrence token by token. Derivation: docs/bounds.md §2.
#pragma once

#include <vector>

#include "spec/contract.h"
#include "spec/problem.h"
#include "verify/bound/source.h"

namespace ssmv::bound {

struct SequentialInput {
  const Problem* problem = nullptr;
  const Contract* contract = nullptr;        // family sequential
  const std::vector<double>* delta = nullptr;  // [T, H] exact δ (the reference's nearest doubles)
  const std::vector<double>* decay = nullptr;  // [T, H] exact exp(δ·A)
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
  // true: the state is stored in the state format after every token (one launch per
  // token); false: kept in the accumulation format across a sequence, stored at its end.
  bool store_every_token = false;
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
SequentialBounds sequential_bounds(const SequentialInput& in);

}  // namespace ssmv::bound
