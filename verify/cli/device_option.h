// The --device option of the commands that run the bundled kernels (run, replay).
#pragma once

#include <string>

#include "verify/run/kernel_check.h"

namespace ssmv::cli {

// "twin", "gpu", or with allow_auto "auto" (the GPU when one is present). Asking for the
// GPU on a machine without one is a UsageError.
verify::Device parse_device(const std::string& text, bool allow_auto);

}  // namespace ssmv::cli
