// Where the worst element's bound comes from, for the reports: after judge_tensor, these
// split the bound of a TensorReport's worst element over its sources
// (verify/bound/attribution.h) into TensorReport::worst_bound_sources. A worst element with
// bound 0 (an unwritten pool slot) has nothing to split.
#pragma once

#include <cstdint>
#include <vector>

#include "reference/reference.h"
#include "spec/contract.h"
#include "spec/problem.h"
#include "verify/bound/attribution.h"
#include "verify/judge/check_result.h"
#include "verify/judge/tensor_report.h"

namespace ssmv::verify {

// The shares of `a`, largest first, as the report keeps them.
void keep_shares(TensorReport& r, const bound::Attribution& a);
// `index` is in the bound's own layout (r's unless the caller maps it). y_element: the y
// element's own y when `in` holds no y vectors (bound::attribute_sequential).
void attribute_worst(TensorReport& r, const bound::SequentialInput& in, bound::BoundOf which, int64_t index,
                     const bound::YElement* y_element = nullptr);
// The chunked bound of `p` under `c`, at r's worst element.
void attribute_worst(TensorReport& r, const Problem& p, const Contract& c, const ref::ExactResult& exact,
                     bound::BoundOf which);
// The worst elements of a hand-off's y and final_state (verify/judge/handoff.h).
void attribute_handoff(KernelCheck& kc, const Problem& p, const std::vector<int64_t>& prefill, const Contract& chunked,
                       const Contract& decode, bool stores_every_token, const ref::ExactResult& exact);

}  // namespace ssmv::verify
