// run_gpu in a build without CUDA: there is no kernel to run.
#include <stdexcept>

#include "fast/ssu/ssu.h"
#include "fast/ssu/ssu_pack.h"

namespace ssmv::ssu {

bool gpu_built() { return false; }

Result run_gpu(const DecodeProblem& d, const Options& options) {
  validate(d, options);
  throw std::runtime_error("ssu::run_gpu: this build has no CUDA kernel (SSMV_HAVE_CUDA is OFF)");
}

}  // namespace ssmv::ssu
