// Mamba-3 precision contracts as JSON files: a kernel author's own step or prefill contract — other
// budgets measured on their GPU (docs/mamba3-bounds.md A4: the transcendentals' budgets are one
// GPU's), another angle or q/k store format — given to `ssmv check --contract FILE`. The format, every
// field and how to start from a preset: docs/contracts.md "Mamba-3 contract files".
//
//   {"family": "mamba3_step", "name": ..., "dot_operands": "bf16", "dot_tensor_cores": true,
//    "division_rel": 2.384185791015625e-07, "transcendentals": [6 budgets: tanh cos sin exp sigmoid silu]}
//   {"family": "mamba3_prefill", "name": ..., "angle_store": "bf16", "qk_store": "bf16",
//    "dot_operands": "bf16", "dot_tensor_cores": true, "qk_dot_tf32": true, "division_rel": ...,
//    "transcendentals": [6 budgets: tanh cos sin exp2 sigmoid silu]}
//
// Reading is strict (verify/contracts/json_fields.h): an unknown, missing or mistyped field, a
// budget missing or given twice, a format other than fp32/bf16/fp16 is a FileFormatError naming the
// file and the field.
#pragma once

#include <string>

#include "spec/mamba3/contract.h"
#include "verify/json/json.h"

namespace ssmv::family::mamba3 {

json::Value step_contract_to_json(const ssmv::mamba3::StepContract& c);
json::Value prefill_contract_to_json(const ssmv::mamba3::PrefillContract& c);

// The file's family: "mamba3_step" or "mamba3_prefill" (FileFormatError for anything else).
std::string contract_file_family(const std::string& path);
ssmv::mamba3::StepContract read_step_contract(const std::string& path);
ssmv::mamba3::PrefillContract read_prefill_contract(const std::string& path);

}  // namespace ssmv::family::mamba3
