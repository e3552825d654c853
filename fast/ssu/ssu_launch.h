// Launcher of the SSU CUDA kernel (built only when SSMV_HAVE_CUDA). The Params pointers
// refer to device memory.
#pragma once

#include <cuda_runtime_api.h>

#include "fast/ssu/ssu_params.h"

namespace ssmv::ssu {

// check_params(p) (throws ProblemError before launching), then one launch on `stream`.
// The index arrays are device memory and are not checked here: callers that hold host
// copies call check_indices first (run_gpu does). Asynchronous; errors of the launch
// itself are thrown through SSMV_CUDA_CHECK.
void launch(const Params& p, cudaStream_t stream = nullptr);

}  // namespace ssmv::ssu
