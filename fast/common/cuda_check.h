// One checking macro for every CUDA runtime call: a failure throws std::runtime_error
// naming the call, the file, the line and the CUDA error string. Link ssmv_cuda_common.
#pragma once

#include <cuda_runtime_api.h>

namespace ssmv {

// Throws std::runtime_error("<file>:<line>: <expr> failed: <cudaGetErrorName>: <string>").
[[noreturn]] void throw_cuda_error(cudaError_t error, const char* expr, const char* file, int line);

// True when the CUDA runtime finds at least one device (GPU tests GTEST_SKIP otherwise).
// Never throws: a missing driver counts as no device.
bool cuda_device_available();
// The number of devices the CUDA runtime finds; 0 (never throws) without a driver.
int cuda_device_count();

}  // namespace ssmv

#define SSMV_CUDA_CHECK(call)                                                      \
  do {                                                                             \
    const cudaError_t ssmv_cuda_check_error_ = (call);                             \
    if (ssmv_cuda_check_error_ != cudaSuccess) {                                   \
      ::ssmv::throw_cuda_error(ssmv_cuda_check_error_, #call, __FILE__, __LINE__); \
    }                                                                              \
  } while (0)
