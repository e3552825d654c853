// Contract presets of the production Triton kernels that serving engines run (mamba_ssm and
// vLLM ship the same arithmetic, docs/contracts.md "Production Triton kernels"):
//
//   triton.ssu                selective_state_update (decode), any state format
//   triton.chunk_scan         mamba_chunk_scan_combined, batched layout (chunks restart at
//                             every sequence; final states from the fp32 state passing)
//   triton.chunk_scan.varlen  its varlen form (cu_seqlens, seq_idx): chunk boundaries at
//                             multiples of the chunk size on the packed axis, final states
//                             formed by chunk_state_varlen from the inter-chunk states stored
//                             in C's dtype
//
// Their transcendental budgets were measured on the H200 over every fp32 argument of each
// range (scripts/triton/measure_budgets.py; figures and command in each budget's
// how_measured and docs/measurements/triton-budgets.md); their rounding points and
// reduction orders are read off the kernels' source (docs/contracts.md names the lines).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "spec/contract.h"

namespace ssmv::verify {

// The preset names above, in that order.
const std::vector<std::string_view>& triton_preset_names();
bool is_triton_preset(std::string_view name);
// `chunk_size` (>= 1) is used by the chunked presets and ignored by triton.ssu.
// std::invalid_argument for another name or a chunked preset without a chunk size.
Contract triton_preset(std::string_view name, int64_t chunk_size);

}  // namespace ssmv::verify
