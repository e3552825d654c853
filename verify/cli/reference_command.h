// `ssmv reference`: computes and prints the certified reference of a problem (the
// built-in default problem unless told otherwise).
#pragma once

#include <string>
#include <vector>

namespace ssmv::cli {

// Returns the process exit code: 0 certified, 1 certification failed, 2 bad usage/input.
int reference_command(const std::vector<std::string>& args);

}  // namespace ssmv::cli
