// Stage (e) on wgmma (kernels_wgmma.cuh), compiled for the architecture-specific target
// sm_90a in its own translation unit (scan_wgmma.cu) whatever CMAKE_CUDA_ARCHITECTURES
// says: its code runs on a device of compute capability 9.0 only, where gpu.cu launches it
// in place of scan_async_kernel when Config::wgmma asks for it (off by default: slower than
// the mma.sync kernel on the H200, bench/NOTES.md).
// CUDA builds only.
#pragma once

#include "fast/chunk_scan/params.h"

namespace ssmv::chunk_scan {

using StageKernel = void (*)(Params);

// scan_wgmma_kernel<Op> for Op = the input format (bf16 or fp16; throws ProblemError for
// another format).
StageKernel scan_wgmma_kernel_for(Format input);

// True when the current device has compute capability 9.0 (H100, H200: sm_90a code runs
// there and nowhere else). Never throws: no device counts as false.
bool wgmma_device();

}  // namespace ssmv::chunk_scan
