// run_gpu in a build without CUDA: there is no kernel to run.
#include <stdexcept>

#include "fast/chunk_scan/gpu.h"

namespace ssmv::chunk_scan {

Result run_gpu(const Problem& problem, const Config& config) {
  validate(problem, config);
  throw std::runtime_error("chunk_scan::run_gpu: this build has no CUDA kernel (SSMV_HAVE_CUDA is OFF)");
}

}  // namespace ssmv::chunk_scan
