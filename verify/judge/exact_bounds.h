// The bound inputs of a problem from the reference's exact values: what every check (the
// bundled runner, external dumps, the hand-off) hands to verify/bound/.
#pragma once

#include "reference/reference.h"
#include "spec/contract.h"
#include "spec/problem.h"
#include "verify/bound/chunked_bound.h"
#include "verify/bound/sequential_bound.h"

namespace ssmv::verify {

// The chunked-family bound's input for `p` under `contract`, from the reference's exact
// values (pointers into `exact`), and the bounds themselves.
bound::ChunkedInput chunked_input_for(const Problem& p, const Contract& contract, const ref::ExactResult& exact);
bound::ChunkedBounds chunked_bounds_for(const Problem& p, const Contract& contract,
                                        const ref::ExactResult& exact);

// The sequential-family bound's input likewise (initial state: p's; tokens_per_launch as
// given: 1 one launch per token, 0 the whole sequence in one). Both run on
// ref::default_threads() threads.
bound::SequentialInput sequential_input_for(const Problem& p, const Contract& contract, const ref::ExactResult& exact,
                                            int64_t tokens_per_launch);

}  // namespace ssmv::verify
