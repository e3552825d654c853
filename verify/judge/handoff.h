// The prefill/decode hand-off as a bound: each sequence's first prefill[s] tokens through a
// chunked kernel, whose final state (stored in the state format) a decode kernel continues
// from, token by token, over the rest. The bound is the combined one: the chunked bound on
// the prefix, then the sequential bound starting from the exact state at the split and
// carrying the chunked bound of the handed-over state as inherited error
// (docs/bounds.md §2, initial_error). Used by the bundled hand-off check (`ssmv run`) and
// by `ssmv check --kernel handoff` on external dumps.
#pragma once

#include <cstdint>
#include <vector>

#include "reference/reference.h"
#include "spec/contract.h"
#include "spec/problem.h"
#include "verify/bound/attribution.h"

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

}  // namespace ssmv::verify
