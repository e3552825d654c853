// run_gpu in a build without CUDA: there is no kernel to run.
#include <stdexcept>

#include "fast/mamba3/gpu.h"

namespace ssmv::mamba3_step {

Result run_gpu(const ssmv::mamba3::Problem& pr, int) {
  mamba3_step::validate(pr);
  throw std::runtime_error("mamba3_step::run_gpu: this build has no CUDA kernel (SSMV_HAVE_CUDA is OFF)");
}

}  // namespace ssmv::mamba3_step
