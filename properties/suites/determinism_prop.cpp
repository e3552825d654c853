// Property 7 (host part): determinism. The same input gives the same bits twice: chunk_scan
// twin (y, final and boundary states; both contracts, chunk sizes 64/128/256) and SSU twin
// (y and the whole state pool), each run twice on the same problem. The GPU part (GPU twice,
// GPU = twin) is gpu_prop.cpp.
//
// Case counts (base; ×100 in campaign mode): 3750 chunk_scan, 12500 SSU.
#include "fast/chunk_scan/chunk_scan.h"
#include "fast/ssu/ssu.h"
#include "properties/gen/problem_gen.h"
#include "properties/harness/case_failure.h"
#include "properties/harness/property.h"
#include "properties/relations/agreement.h"

namespace ssmv::prop {

SSMV_PROPERTY(Determinism, ChunkScanTwin, 3750, ()) {
  const ChunkCase c = draw_chunk_case(PrefillOptions{});
  const GeneratedProblem& g = c.g;
  const auto kind = c.kind;
  const int64_t L = c.L;
  run_case(prefill_case(g.problem, kind, L, verify::Device::twin), [&]() -> std::optional<CaseFailure> {
    chunk_scan::Config cfg;
    cfg.contract = kind;
    cfg.chunk_size = L;
    cfg.boundary_states = true;
    const chunk_scan::Result a = chunk_scan::run(g.problem, Device::twin, cfg),
                             b = chunk_scan::run(g.problem, Device::twin, cfg);
    if (auto f = same_bits("y (run 1 vs run 2)", a.y, b.y)) return f;
    if (auto f = same_bits("final_state (run 1 vs run 2)", a.final_state, b.final_state)) return f;
    return same_bits("boundary_states (run 1 vs run 2)", a.boundary_states, b.boundary_states);
  });
}

SSMV_PROPERTY(Determinism, SsuTwin, 12500, ()) {
  const GeneratedDecode g = *decode_problem(DecodeOptions{});
  label_case(g);
  run_case(decode_case(g.decode, verify::Device::twin), [&]() -> std::optional<CaseFailure> {
    const ssu::Result a = ssu::run(g.decode, Device::twin), b = ssu::run(g.decode, Device::twin);
    if (auto f = same_bits("y (run 1 vs run 2)", a.y, b.y)) return f;
    return same_bits("state_pool (run 1 vs run 2)", a.state_pool, b.state_pool);
  });
}

}  // namespace ssmv::prop
