// The two precision contracts of chunk_scan, as data (spec/contract.h) for the verifier.
//
//   production — the rounding points of the production Triton kernels (mamba_ssm ssd_*):
//                dt-scaled B, the incoming chunk state and the decayed, dt-scaled C·Bᵀ are
//                rounded to the input format before their matrix products;
//   fp32       — the same algorithm with nothing rounded below fp32 except the inputs and
//                the stored outputs.
#pragma once

#include <cstdint>
#include <string_view>

#include "spec/contract.h"

namespace ssmv::chunk_scan {

enum class ContractKind : uint8_t { production, fp32 };

std::string_view contract_kind_name(ContractKind kind);  // "production", "fp32"
// Parses "production" or "fp32"; false otherwise.
bool parse_contract_kind(std::string_view text, ContractKind& out);

// The contract of chunk_scan for the kind and chunk size.
Contract contract(ContractKind kind, int64_t chunk_size);

}  // namespace ssmv::chunk_scan
