#include "fast/chunk_scan/scan_wgmma.h"

#include <cuda_runtime_api.h>

#include <string>

#include "fast/chunk_scan/kernels_wgmma.cuh"
#include "spec/problem.h"

namespace ssmv::chunk_scan {

StageKernel scan_wgmma_kernel_for(Format input) {
  switch (input) {
    case Format::bf16: return gpu::scan_wgmma_kernel<__nv_bfloat16>;
    case Format::fp16: return gpu::scan_wgmma_kernel<__half>;
    default: break;
  }
  throw ProblemError("chunk_scan: the wgmma stage (e) takes bf16 or fp16 inputs, not " +
                     std::string(format_name(input)));
}

bool wgmma_device() {
  int device = 0, major = 0, minor = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
    cudaGetLastError();  // clear the error: no device counts as false
    return false;
  }
  return major == 9 && minor == 0;
}

}  // namespace ssmv::chunk_scan
