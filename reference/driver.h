// Internal: runs every (sequence, head) pair of a problem through the fast tier
// (tiered.h) and, for the pairs it cannot settle, the MPFR core (head_recurrence.h) at the
// working precision with its a-priori bound (mpfr_bound.h; again at the check precision
// when a rounding is undecided), certifies every value and hands it to a Sink. Shared by compute(), compute_streaming() and
// compute_decode() (reference.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "reference/reference.h"
#include "spec/problem.h"

namespace ssmv::ref::detail {

// Where each sequence's initial state comes from.
struct InitialStates {
  // [S]: pointer to the sequence's [H, P, N] floats (state format), or null for zero.
  std::vector<const float*> floats;
  // When set: [S, H, P, N] full-precision values and magnitudes, used instead of floats.
  const ExactValues* exact = nullptr;
};

// Checks the options (field and value in the ProblemError) and state_positions against
// the problem; returns check_precision_bits resolved.
int checked_check_precision(const Problem& problem, const Options& options);

// The problem and options must have been validated. Runs every (sequence, head) pair
// through the tiers Options::tier names and returns what each settled. Throws
// CertificationError for the failing element of the first failing pair in (s, h) order,
// whatever the thread count.
TierCounts run(const Problem& problem, const InitialStates& initial, const Options& options, Sink& sink);

}  // namespace ssmv::ref::detail
