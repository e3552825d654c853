#include "fast/common/device.h"

#include <stdexcept>
#include <string>

#ifdef SSMV_HAVE_CUDA
#include "fast/common/cuda_check.h"
#endif

namespace ssmv {

std::string_view device_name(Device d) { return d == Device::twin ? "twin" : "gpu"; }

#ifdef SSMV_HAVE_CUDA
bool gpu_built() { return true; }
bool gpu_available() { return cuda_device_available(); }
int gpu_count() { return cuda_device_count(); }
void use_gpu(int index) {
  if (index < 0 || index >= gpu_count()) {
    throw std::runtime_error("GPU " + std::to_string(index) + " requested; this process sees " +
                             std::to_string(gpu_count()));
  }
  SSMV_CUDA_CHECK(cudaSetDevice(index));
}
#else
bool gpu_built() { return false; }
bool gpu_available() { return false; }
int gpu_count() { return 0; }
void use_gpu(int index) {
  throw std::runtime_error("GPU " + std::to_string(index) + " requested; this build has no CUDA");
}
#endif

}  // namespace ssmv
