// Property 3: the disaggregated prefill/decode hand-off. chunk_scan prefills [0, k) of every
// sequence, SSU decodes [k, T) from the handed-over state (state format); the whole stays
// within the combined contract (chunked bound of the prefix, propagated through the
// sequential bound; verify/run/kernel_check.h check_handoff), for every k of a case among
// 0, 1, L − 1, L, L + 1, T − 1 and T (T: the shortest sequence) and one drawn k.
//
// Case counts (base; ×100 in campaign mode): 900 per contract, each case checking up to 8
// split points. Problems have ≤ 6144 state updates.
#include <algorithm>
#include <set>

#include "properties/gen/problem_gen.h"
#include "properties/harness/case_failure.h"
#include "properties/harness/property.h"

namespace ssmv::prop {
namespace {

void handoff_within_contract(chunk_scan::ContractKind kind) {
  PrefillOptions o;
  o.max_updates = 6144;  // each case checks up to 8 split points
  const ChunkCase c = draw_chunk_case(o, kind);
  const GeneratedProblem& g = c.g;
  const int64_t L = c.L, shortest = shortest_sequence(g.problem.shape);
  std::set<int64_t> splits{0, 1, L - 1, L, L + 1, shortest - 1, shortest};
  splits.insert(*rc::gen::inRange<int64_t>(0, shortest + 1));
  for (int64_t k : splits) {
    if (k < 0 || k > shortest) continue;
    RC_TAG(k == 0 ? "k=0" : k == shortest ? "k=T" : k % L == 0 ? "k=chunk boundary" : "k inside");
    expect_within_contract(handoff_case(g.problem, k, kind, L, verify::Device::twin), [&] {
      return verify::check_handoff(g.problem, k, kind, L, verify::Device::twin);
    });
  }
}

}  // namespace

SSMV_PROPERTY(HandoffContract, Production, 900, ()) { handoff_within_contract(chunk_scan::ContractKind::production); }
SSMV_PROPERTY(HandoffContract, Fp32, 900, ()) { handoff_within_contract(chunk_scan::ContractKind::fp32); }

}  // namespace ssmv::prop
