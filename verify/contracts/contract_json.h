// Precision contracts (spec/contract.h) as JSON files, and the bundled contracts as named
// presets. A kernel author describes their own kernel in a file of this shape; the format,
// every field and a complete example are in docs/contracts.md.
//
// Reading is strict: an unknown, missing or mistyped field, an unknown enum name, or a
// value outside its domain (negative budget, arg_lo > arg_hi, a point rounded twice, ...)
// is a FileFormatError naming the file and the field, e.g.
//   "mykernel.json: field 'roundings'[1].'format': unknown format 'bf17'
//    (expected input, state, output, fp32, bf16, fp16)".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "spec/contract.h"
#include "verify/json/json.h"
#include "verify/contracts/json_fields.h"

namespace ssmv::verify {

// The enum names of spec/contract.h, here too for the readers of this header.
using ssmv::family_name;
using ssmv::reduction_order_name;

// Every field of the contract; ±Inf argument limits as the strings "inf" / "-inf".
json::Value contract_to_json(const Contract& c);
// `file` names the source in error messages.
Contract contract_from_json(const json::Value& v, const std::string& file);
Contract parse_contract(std::string_view text, const std::string& file);
Contract read_contract_file(const std::string& path);
// Pretty-printed JSON, written atomically (temporary file + rename).
void write_contract_file(const std::string& path, const Contract& c);

// The presets: the bundled kernels' contracts "ssu", "chunk_scan.production",
// "chunk_scan.fp32", and the production Triton kernels' (verify/contracts/triton_presets.h).
const std::vector<std::string>& contract_preset_names();
// `chunk_size` is used by the chunked presets (must be positive there) and ignored by
// "ssu". Unknown name: std::invalid_argument listing the presets.
Contract contract_preset(std::string_view name, int64_t chunk_size);

// A preset name, or else the path of a contract JSON file. For a chunked contract from a
// file, `chunk_size` (when positive) must equal the file's chunk_size: a contract holds for
// the chunk size it was written for. Errors name the preset list and the file.
Contract load_contract(std::string_view name_or_path, int64_t chunk_size);

}  // namespace ssmv::verify
