// `ssmv check`: verifies an external kernel's dump (tensor files of its inputs and outputs)
// against the certified reference and a precision contract.
#pragma once

#include <string>
#include <vector>

namespace ssmv::cli {

// Exit code: 0 within contract, 1 VIOLATION / INVALID / biased, 2 bad input or usage, 3 SUSPICIOUS.
int check_command(const std::vector<std::string>& args);

}  // namespace ssmv::cli
