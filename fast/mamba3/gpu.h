// The bundled Mamba-3 step on the GPU: the problem packed (pack.h), uploaded, one launch per token
// (kernels.cu), read back. Declared in every build: without CUDA, run_gpu validates and then
// throws (no_gpu.cpp).
#pragma once

#include "fast/mamba3/step.h"

namespace ssmv::mamba3_step {

// Throws ProblemError on bad input (before any allocation), std::runtime_error when CUDA is not
// built or no device is present. `block_threads` (1 to 1024) changes no bit (launch.h).
Result run_gpu(const ssmv::mamba3::Problem& pr, int block_threads = 128);

}  // namespace ssmv::mamba3_step
