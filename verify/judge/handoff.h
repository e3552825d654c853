// The prefill/decode hand-off as a bound: each sequence's first prefill[s] tokens through a
// chunked kernel, whose final state (stored in the state format) a decode kernel continues
// from, token by token, over the rest. The bound is the combined one: the chunked bound on
// the prefix, then the sequential bound starting from the exact state at the split and
// carrying the chunked bound of the handed-over state as inherited error
// (docs/bounds.md §2, initial_error). Used by the bundled hand-off check (`ssmv run`) and
// by `ssmv check --kernel handoff` on external dumps.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "reference/reference.h"
#include "spec/contract.h"
#include "spec/problem.h"
#include "verify/bound/attribution.h"
#include "verify/bound/chunked_bound.h"
#include "verify/bound/sequential_bound.h"

namespace ssmv::verify {

// Throws ProblemError naming the sequence when prefill has not one entry per sequence or
// an entry outside [0, length of its sequence].
void validate_prefill(const Problem& p, const std::vector<int64_t>& prefill);

// The reference options the hand-off bound needs: the exact state of every sequence s with
// prefill[s] > 0 at its split (ref::Options::state_positions, in sequence order).
ref::Options handoff_reference_options(const Problem& p, const std::vector<int64_t>& prefill);

struct HandoffBounds {
  std::vector<double> y;            // [T, H, P] on |ŷ − y|: chunked on the prefixes, sequential after
  std::vector<double> final_state;  // [S, H, P, N] on the stored state after the last token
};

// `exact` is ref::compute(p, handoff_reference_options(p, prefill)). `decode_stores_every_token`:
// the decode kernel stores the state in the state format after every token (one launch
// per token, as external decode dumps are made); false: the state stays in the
// accumulation format through a request's tokens (one launch per request, the bundled SSU).
HandoffBounds handoff_bounds(const Problem& p, const std::vector<int64_t>& prefill, const Contract& chunked,
                             const Contract& decode, bool decode_stores_every_token, const ref::ExactResult& exact);

// Where the bound of one element of a hand-off comes from: `index` into y [T, H, P]
// (is_y) or the final states [S, H, P, N]. A prefix element's bound is the chunked one's;
// a decoded element's the sequential one's, the prefill's error in the handed-over state
// being its initial_error source. Same arguments as handoff_bounds.
bound::Attribution handoff_attribution(const Problem& p, const std::vector<int64_t>& prefill, const Contract& chunked,
                                       const Contract& decode, bool decode_stores_every_token,
                                       const ref::ExactResult& exact, bool is_y, int64_t index);

// The two parts of a hand-off for a streamed check (verify/judge/external_check.cpp): the
// prefix problem under the chunked contract, bounded up to the terms that read y
// (ChunkedBounds::y_before_dx, finished per element by `prefix_y`), and the decode problem
// under the sequential contract, for one bound::SequentialPairBound per pair as the
// reference streams its tokens. No vector over the tokens of y is kept: the memory is the
// prefix's y_before_dx and state-sized arrays. `delta`, `decay`: ref::compute_scalars(p)'s columns.
// The bounds are bit for bit those of handoff_bounds (check_outputs_test).
class HandoffStream {
 public:
  HandoffStream(const Problem& p, const std::vector<int64_t>& prefill, const Contract& chunked, const Contract& decode,
                bool decode_stores_every_token, const TokenHeadColumn& delta, const TokenHeadColumn& decay);
  HandoffStream(const HandoffStream&) = delete;
  HandoffStream& operator=(const HandoffStream&) = delete;

  // Where token t of sequence q (packed index in p) falls: its token in the prefix problem
  // (>= 0) or in the decode problem (>= 0), the other -1.
  int64_t prefix_token(int64_t q, int64_t t) const;
  int64_t decode_token(int64_t q, int64_t t) const;
  // The decode problem's sequence of q, or -1 when q has no decoded tokens.
  int64_t decode_sequence(int64_t q) const { return dec_rank_[q]; }
  bool has_prefix(int64_t q) const { return prefill_[q] > 0; }
  int64_t split(int64_t q) const { return p_.shape.cu_seqlens[q] + prefill_[q]; }

  // The prefix's floats of token tp (a prefix token), head h: [P] (bound::ChunkedBounds::y_before_dx).
  const float* prefix_before_dx(int64_t tp, int64_t h) const { return pre_bounds_.y_before_dx.row(tp, h); }
  // The prefix's y bound of element `yi` of the prefix problem's y, from its float before D·x
  // (prefix_before_dx) and its own y.
  double prefix_y(int64_t yi, float before_dx, const bound::YElement& y) const { return (*finish_)(yi, before_dx, y); }
  // The bound on the stored state of a sequence without decoded tokens: the chunked one's,
  // head h of sequence q ([P, N]).
  const double* handed_error(int64_t q, int64_t h) const {
    return &handed_error_[size_t(q * per_ + h * p_.shape.P * p_.shape.N)];
  }
  // Sets the exact state the decode of sequence q starts from (its state at the split, [H,
  // P, N] nearest doubles of head h's P·N elements), before its first decoded token.
  void set_split_state(int64_t q, int64_t h, std::span<const double> nearest);

  const Problem& prefix_problem() const { return pre_; }
  const Problem& decode_problem() const { return dec_; }
  const bound::ChunkedInput& prefix_input() const { return pre_in_; }
  const bound::SequentialInput& decode_input() const { return dec_in_; }

  // The sources of the worst elements' bounds: `index` into y [T, H, P] (is_y, with the
  // element's own y) or into the final states [S, H, P, N].
  bound::Attribution attribute(bool is_y, int64_t index, const bound::YElement* y) const;

 private:
  const Problem& p_;
  const std::vector<int64_t>& prefill_;
  int64_t per_ = 0;
  Problem pre_, dec_;
  std::vector<int64_t> pre_kept_, dec_kept_, pre_start_, dec_start_, dec_rank_, pre_rank_;
  std::vector<double> pre_delta_, dec_delta_, dec_decay_, handed_error_;
  bound::ChunkedInput pre_in_;
  bound::SequentialInput dec_in_;
  bound::ChunkedBounds pre_bounds_;
  std::unique_ptr<bound::ChunkedYBound> finish_;  // reads pre_in_, set in the constructor's body
};

}  // namespace ssmv::verify
