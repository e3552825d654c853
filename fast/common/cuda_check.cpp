#include "fast/common/cuda_check.h"

#include <stdexcept>
#include <string>

namespace ssmv {

void throw_cuda_error(cudaError_t error, const char* expr, const char* file, int line) {
  throw std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + expr +
                           " failed: " + cudaGetErrorName(error) + ": " + cudaGetErrorString(error));
}

int cuda_device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky "no driver" error
    return 0;
  }
  return count;
}

bool cuda_device_available() { return cuda_device_count() > 0; }

}  // namespace ssmv
