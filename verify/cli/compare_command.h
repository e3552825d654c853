// `ssmv compare`: two dumps of the same problem side by side (see compare_command.cpp).
#pragma once

#include <string>
#include <vector>

namespace ssmv::cli {

// Exit code: 0 every divergence explained and no VIOLATION or INVALID, 1 otherwise, 2 bad
// input or usage.
int compare_command(const std::vector<std::string>& args);

}  // namespace ssmv::cli
