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

// Every registered kernel name, in registration order ("ssu", "chunk_scan", "handoff", ...).
std::vector<std::string> kernel_names();

}  // namespace ssmv::family
