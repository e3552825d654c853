// chunk_scan on the GPU: the problem uploaded, the five stages launched and the Result read
// back (device_launch.h). Declared in every build: without CUDA, run_gpu validates and then
// throws (no_gpu.cpp).
#pragma once

#include "fast/chunk_scan/chunk_scan.h"

namespace ssmv::chunk_scan {

// Throws ProblemError on bad input (before any allocation), std::runtime_error when CUDA
// is not built or no device is present.
Result run_gpu(const Problem& problem, const Config& config);

}  // namespace ssmv::chunk_scan
