// run_gpu in a build without CUDA: there is no kernel to run.
#include <stdexcept>

#include "fast/ssu/gpu.h"

namespace ssmv::ssu {

Result run_gpu(const DecodeProblem& d, const Config& config) {
  validate(d, config);
  throw std::runtime_error("ssu::run_gpu: this build has no CUDA kernel (SSMV_HAVE_CUDA is OFF)");
}

}  // namespace ssmv::ssu
