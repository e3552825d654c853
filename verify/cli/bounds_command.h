// `ssmv bounds`: the error bounds of contracts over a grid of realistic problems, beside the
// bundled twins' measured error and allclose tolerances (verify/bounds_report/,
// docs/error-bounds.md).
#pragma once

#include <string>
#include <vector>

namespace ssmv::cli {

// Exit code: 0 every measured element within its bound, 1 an element over it (a finding),
// 2 bad usage (the message names the option and value).
int bounds_command(const std::vector<std::string>& args);

}  // namespace ssmv::cli
