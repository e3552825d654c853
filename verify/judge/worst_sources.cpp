#include "verify/judge/worst_sources.h"

#include "verify/judge/exact_bounds.h"
#include "verify/judge/handoff.h"

namespace ssmv::verify {

void keep_shares(TensorReport& r, const bound::Attribution& a) {
  r.worst_bound_sources.clear();
  for (const bound::SourceShare& s : a.shares) {
    r.worst_bound_sources.push_back({std::string(bound::bound_source_name(s.source)), s.label, s.share});
  }
}

// After judge_tensor: splits the bound of r's worst element (index `index` of the bound's
// own layout, which is r's unless the caller maps it) over its sources. A worst element
// with bound 0 (an unwritten pool slot) has nothing to split.
void attribute_worst(TensorReport& r, const bound::SequentialInput& in, bound::BoundOf which, int64_t index,
                     const bound::YElement* y_element) {
  if (index < 0 || r.worst.bound <= 0) return;
  keep_shares(r, bound::attribute_sequential(in, which, index, y_element));
}

void attribute_worst(TensorReport& r, const Problem& p, const Contract& c, const ref::ExactResult& exact,
                     bound::BoundOf which) {
  if (r.worst.index < 0 || r.worst.bound <= 0) return;
  keep_shares(r, bound::attribute_chunked(chunked_input_for(p, c, exact), which, r.worst.index));
}

// The worst elements of a hand-off's y and final_state, split over their sources.
void attribute_handoff(KernelCheck& kc, const Problem& p, const std::vector<int64_t>& prefill, const Contract& chunked,
                       const Contract& decode, bool stores_every_token, const ref::ExactResult& exact) {
  for (TensorReport& r : kc.tensors) {
    if (r.worst.index < 0 || r.worst.bound <= 0) continue;
    keep_shares(r, handoff_attribution(p, prefill, chunked, decode, stores_every_token, exact, r.name == "y",
                                       r.worst.index));
  }
}

}  // namespace ssmv::verify
