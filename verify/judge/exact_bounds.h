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

// The sequential-family bound's input likewise (initial state: p's; store_every_token as
// given). Both run on ref::default_threads() threads.
bound::SequentialInput sequential_input_for(const Problem& p, const Contract& contract, const ref::ExactResult& exact,
                                            bool store_every_token);

}  // namespace ssmv::verify
