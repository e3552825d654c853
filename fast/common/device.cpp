#include "fast/common/device.h"

#ifdef SSMV_HAVE_CUDA
#include "fast/common/cuda_check.h"
#endif

namespace ssmv {

std::string_view device_name(Device d) { return d == Device::twin ? "twin" : "gpu"; }

#ifdef SSMV_HAVE_CUDA
bool gpu_built() { return true; }
bool gpu_available() { return cuda_device_available(); }
#else
bool gpu_built() { return false; }
bool gpu_available() { return false; }
#endif

}  // namespace ssmv
