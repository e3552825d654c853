// `ssmv replay FILE`: re-runs a counterexample file (docs/counterexample-format.md) and
// prints its verdict.
#pragma once

#include <string>
#include <vector>

namespace ssmv::cli {

// Exit code: 0 no VIOLATION or INVALID, 1 found, 2 bad input or usage.
int replay_command(const std::vector<std::string>& args);

}  // namespace ssmv::cli
