// `ssmv run`: the bundled kernels on the built-in default suite, one verdict table.
#pragma once

#include <string>
#include <vector>

namespace ssmv::cli {

// Exit code: 0 no VIOLATION or INVALID, 1 found, 2 bad usage.
int run_command(const std::vector<std::string>& args);

}  // namespace ssmv::cli
