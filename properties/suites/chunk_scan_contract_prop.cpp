// Property 2: chunk_scan (host twin) stays within its contract, for both contracts
// (production, fp32) and every supported chunk size (64, 128, 256). Each case: a prefill
// problem whose sequences are short or k·L − 1, k·L, k·L + 1 tokens long; y, the final
// states and the chunk-boundary states judged against the certified reference and the
// chunked bound (verify/run/kernel_check.h).
//
// Case counts (base; ×100 in campaign mode): 1800 per (contract, chunk size), 10800 in all.
// Problems have ≤ 12288 state updates (gen/problem_gen.h).
#include "properties/gen/problem_gen.h"
#include "properties/harness/case_failure.h"
#include "properties/harness/property.h"

namespace ssmv::prop {
namespace {

void chunk_scan_within_contract(chunk_scan::ContractKind kind, int64_t L) {
  PrefillOptions o;
  o.chunk_size = L;
  const GeneratedProblem g = *prefill_problem(o);
  label_case(g);
  expect_within_contract(prefill_case(g.problem, kind, L, verify::Device::twin), [&] {
    return verify::check_chunk_scan(g.problem, kind, L, verify::Device::twin, /*boundary_states=*/true);
  });
}

constexpr auto kProduction = chunk_scan::ContractKind::production;
constexpr auto kFp32 = chunk_scan::ContractKind::fp32;

}  // namespace

SSMV_PROPERTY(ChunkScanContract, Production64, 1800, ()) { chunk_scan_within_contract(kProduction, 64); }
SSMV_PROPERTY(ChunkScanContract, Production128, 1800, ()) { chunk_scan_within_contract(kProduction, 128); }
SSMV_PROPERTY(ChunkScanContract, Production256, 1800, ()) { chunk_scan_within_contract(kProduction, 256); }
SSMV_PROPERTY(ChunkScanContract, Fp32Chunk64, 1800, ()) { chunk_scan_within_contract(kFp32, 64); }
SSMV_PROPERTY(ChunkScanContract, Fp32Chunk128, 1800, ()) { chunk_scan_within_contract(kFp32, 128); }
SSMV_PROPERTY(ChunkScanContract, Fp32Chunk256, 1800, ()) { chunk_scan_within_contract(kFp32, 256); }

}  // namespace ssmv::prop
