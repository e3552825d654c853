// The prefill→decode hand-off of one (sequence, head) pair: the first K tokens through mamba_ssm's
// chunked prefill, the rest through its step kernel one launch per token, starting from the
// four-part state the prefill returned. Judged against the exact recurrence over all tokens: the
// bound of each decode token carries the prefill's errors in the state it started from
// (verify/bound/mamba3/step_bound.h StartState), and the sharp model runs both emulations in turn.
#pragma once

#include <cstdint>

#include "spec/mamba3/contract.h"
#include "spec/mamba3/problem.h"
#include "verify/bound/mamba3/exact_trace.h"
#include "verify/bound/mamba3/step_bound.h"
#include "verify/bound/mamba3/step_emulation.h"
#include "verify/family/mamba3/sharp.h"

namespace ssmv::family::mamba3 {

struct Handoff {
  int64_t prefill_tokens = 0;  // K >= 1 (every token when the sequence has no more)
  int64_t chunk_size = 0;      // the prefill's
  ssmv::mamba3::PrefillContract prefill;
  ssmv::mamba3::StepContract decode;

  // Where the bounds need |S|: the prefill's chunk ends, then every decode token.
  bound::mamba3::TraceGrid grid() const { return {chunk_size, prefill_tokens}; }
};

// The bounds of a pair's y (all tokens) and returned four-part state (after its last token).
// `pair`: one sequence, one head (certified_trace.h pair_problem); `exact`: its certified trace on
// h.grid(). Throws what prefill_bounds and step_bounds throw, and std::invalid_argument for a
// trace on another grid.
bound::mamba3::StepBounds handoff_bounds(const ssmv::mamba3::Problem& pair, const Handoff& h,
                                         const bound::mamba3::ExactTrace& exact);

// The hand-off's rounding model for the sharp verdict: the prefill's emulation over the first K
// tokens, then the step kernel's from the state it returned.
SharpModel handoff_model(const Handoff& h);

}  // namespace ssmv::family::mamba3
