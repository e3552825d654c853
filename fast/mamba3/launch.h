// The launcher of the bundled Mamba-3 step kernel (kernels.cu): one launch, device pointers.
// CUDA builds only.
#pragma once

#include <cuda_runtime_api.h>

#include "fast/mamba3/params.h"

namespace ssmv::mamba3_step {

// check_params, then one block per (sequence, head) of threads over pairs and rows; the block
// size never changes a bit (arithmetic.h fixes every thread's operations and their order).
// Throws ProblemError before launching, std::runtime_error (SSMV_CUDA_CHECK) on a launch error.
void launch(const Params& device_params, cudaStream_t stream = nullptr, int block_threads = 128);

}  // namespace ssmv::mamba3_step
