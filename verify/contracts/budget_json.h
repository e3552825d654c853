// A transcendental budget (spec/contract.h TranscendentalBudget) as a JSON object, read strictly:
// {"function", "ulp_const", "ulp_per_abs_arg", "abs_error", "arg_lo", "arg_hi", "how_measured"},
// the argument limits finite numbers or "inf" / "-inf". Shared by every family's contract files
// (Mamba2's contract_json.h, Mamba-3's verify/family/mamba3/contract_file.h), each with its own
// list of functions.
#pragma once

#include <string>
#include <vector>

#include "spec/contract.h"
#include "verify/contracts/json_fields.h"
#include "verify/json/json.h"

namespace ssmv::verify {

json::Value budget_to_json(const TranscendentalBudget& b);
// FileFormatError naming the field: an unknown member, a function not in `functions`, a
// negative figure, an empty argument range.
TranscendentalBudget budget_from_json(const Field& f, const std::vector<std::string>& functions);
// A finite number >= 0, or FileFormatError naming the field.
double non_negative_number(const Field& f);

}  // namespace ssmv::verify
