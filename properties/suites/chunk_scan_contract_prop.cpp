// Property 2: chunk_scan (host twin) stays within its contract, for both contracts
// (production, fp32) and every supported chunk size (64, 128, 256). Each case: a prefill
// problem whose sequences are short or k·L − 1, k·L, k·L + 1 tokens long; y, the final
// states and the chunk-boundary states judged against the certified reference and the
// chunked bound (verify/run/kernel_check.h). The properties, their case body and counts:
// contract_properties.h (ChunkScanContract.Production64 … Fp32Chunk256).
//
// Case counts (base; ×100 in campaign mode): 1800 per (contract, chunk size), 10800 in all.
// Problems have ≤ 12288 state updates (gen/problem_gen.h).
#include "properties/suites/contract_properties.h"

namespace ssmv::prop {
namespace {

const bool registered = register_contract_properties("chunk_scan");

}  // namespace
}  // namespace ssmv::prop
