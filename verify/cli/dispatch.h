// run_ssmv: the ssmv command line (verify/cli/main.cpp is its only caller besides the
// planted-bug binaries). Returns the exit code: 0 ok, 1 a check failed, 2 bad input/usage.
#pragma once

#include <string>
#include <vector>

namespace ssmv::cli {

int run_ssmv(std::vector<std::string> args);  // args: what follows the program name

}  // namespace ssmv::cli
