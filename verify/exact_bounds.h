// The bound inputs of a problem from the reference's exact values: what every check (the
// bundled runner, external dumps, the hand-off) hands to verify/bound/.
#pragma once

#include "reference/reference.h"
#include "spec/contract.h"
#include "spec/problem.h"
#include "verify/bound/chunked_bound.h"

namespace ssmv::verify {

// The chunked-family bound's input for `p` under `contract`, from the reference's exact
// values (pointers into `exact`), and the bounds themselves.
bound::ChunkedInput chunked_input_for(const Problem& p, const Contract& contract, const ref::ExactResult& exact);
bound::ChunkedBounds chunked_bounds_for(const Problem& p, const Contract& contract,
                                        const ref::ExactResult& exact);

}  // namespace ssmv::verify
