// SSU on the GPU: the problem packed (pack.h), uploaded, launched with the config's variant
// and read back (device_launch.h). Declared in every build: without CUDA, run_gpu validates
// and then throws (no_gpu.cpp).
#pragma once

#include "fast/ssu/ssu.h"

namespace ssmv::ssu {

// Throws ProblemError on bad input (before any allocation), std::runtime_error when CUDA
// is not built or no device is present.
Result run_gpu(const DecodeProblem& d, const Config& config = {});

}  // namespace ssmv::ssu
