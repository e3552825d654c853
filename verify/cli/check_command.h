// `ssmv check`: verifies an external kernel's dump (tensor files of its inputs and outputs)
// against the certified reference and a precision contract.
#pragma once

#include <string>
#include <vector>

namespace ssmv::cli {

// Exit code: 0 no VIOLATION or INVALID, 1 found, 2 bad input or usage.
int check_command(const std::vector<std::string>& args);
void check_usage();

}  // namespace ssmv::cli
