// The registered recurrence families and the kernel names they own: `ssmv check` and the
// dump metadata reader look a dump's kernel up here. A family joins with one line in
// registry.cpp (and its library in verify/family/CMakeLists.txt).
#pragma once

#include <string>
#include <vector>

#include "verify/family/family.h"

namespace ssmv::family {

// Every registered family, in registration order.
const std::vector<const Family*>& families();

// The family that owns `kernel`, or nullptr.
const Family* family_of_kernel(const std::string& kernel);

// The family whose contract_presets() include `name`, or nullptr (Mamba2's presets are
// verify/contracts/contract_json.h's, not listed there).
const Family* family_of_contract(const std::string& name);

// Every registered family's contract preset names, in registration order, as "a, b, c" (for
// the errors that list the presets; "" when none).
std::string family_preset_list();

// Every registered kernel name, in registration order ("ssu", "chunk_scan", "handoff", ...).
std::vector<std::string> kernel_names();

}  // namespace ssmv::family
