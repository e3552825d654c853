// The per-element error bound of mamba_ssm's Mamba-3 SISO chunked prefill (mamba3_siso_combined:
// angle_dt_fwd_kernel, then mamba3_siso_fwd_kernel, at e9594ce1c732): |kernel − exact| for every
// y element and every element of the returned four-part state, for any evaluation that honours a
// PrefillContract. Derivation: docs/mamba3-bounds.md part II (the bracketed numbers in
// prefill_bound.cpp refer to its sections).
#pragma once

#include <cstdint>

#include "spec/mamba3/problem.h"
#include "verify/bound/mamba3/exact_trace.h"
#include "spec/mamba3/contract.h"
#include "verify/bound/mamba3/step_bound.h"  // StepBounds: the bounds of the same five tensors

namespace ssmv::bound::mamba3 {

// `chunk_size`: the kernel's CHUNK_SIZE (chunks start at each sequence's first token, as the
// kernel's varlen and batched forms both do). `exact`: ExactTrace (exact_trace.h) with |S| at the
// ends of those chunks. The returned angle bound is a distance on the circle (StepBounds::angle).
// Throws std::invalid_argument when the trace does not fit, when chunk_size < 1, when adt > 0
// somewhere (the kernel's decays exp2(min(·, 0)) then compute another function than the
// recurrence), when dt < 0, or when the contract cannot bound it (an argument outside a budget's
// range); ssmv::ProblemError for an invalid problem.
StepBounds prefill_bounds(const ssmv::mamba3::Problem& pr, int64_t chunk_size, const ssmv::mamba3::PrefillContract& c,
                          const ExactTrace& exact);

}  // namespace ssmv::bound::mamba3
