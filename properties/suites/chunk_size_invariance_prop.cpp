// Property 4: chunk-size invariance. chunk_scan (host twin) at two chunk sizes L1 < L2 of
// {64, 128, 256}, same contract: y and the final states agree within the sum of the two
// runs' chunked bounds (each bounds the distance from the same certified exact value).
// Sequences are drawn around multiples of L1 so that the two runs cut them differently.
//
// Case counts (base; ×100 in campaign mode): 1800 per contract. ≤ 12288 state updates.
#include "properties/gen/choice.h"
#include "properties/gen/problem_gen.h"
#include "properties/harness/case_failure.h"
#include "properties/harness/property.h"
#include "properties/relations/agreement.h"

namespace ssmv::prop {
namespace {

void chunk_sizes_agree(chunk_scan::ContractKind kind) {
  const auto [L1, L2] = *choice(std::pair<int64_t, int64_t>{64, 128}, std::pair<int64_t, int64_t>{64, 256},
                                          std::pair<int64_t, int64_t>{128, 256});
  PrefillOptions o;
  o.chunk_size = L1;
  const GeneratedProblem g = *prefill_problem(o);
  label_case(g);
  RC_TAG("L=" + std::to_string(L1) + "/" + std::to_string(L2));
  run_case(prefill_case(g.problem, kind, L1, verify::Device::twin), [&]() -> std::optional<CaseFailure> {
    const ref::ExactResult exact = ref::compute(g.problem);
    const BoundedRun a = run_bounded(g.problem, exact, kind, L1);
    const BoundedRun b = run_bounded(g.problem, exact, kind, L2);
    const std::string tag = " (chunk " + std::to_string(L1) + " vs " + std::to_string(L2) + ")";
    if (auto f = agree_within("y" + tag, a.result.y, a.bounds.y, b.result.y, b.bounds.y)) return f;
    return agree_within("final_state" + tag, a.result.final_state, a.bounds.final_state, b.result.final_state,
                        b.bounds.final_state);
  });
}

}  // namespace

SSMV_PROPERTY(ChunkSizeInvariance, Production, 1800, ()) { chunk_sizes_agree(chunk_scan::ContractKind::production); }
SSMV_PROPERTY(ChunkSizeInvariance, Fp32, 1800, ()) { chunk_sizes_agree(chunk_scan::ContractKind::fp32); }

}  // namespace ssmv::prop
