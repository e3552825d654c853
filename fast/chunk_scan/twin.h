// The host twin of chunk_scan: the five stages on the CPU with the kernels' fp32
// operations, order and rounding points (chunk_scan.h), and the tensor-core reductions
// emulated by the docs/design.md §4 model (mma_model.h). Runs everywhere; CI tests it.
#pragma once

#include "fast/chunk_scan/chunk_scan.h"

namespace ssmv::chunk_scan {

// Throws ProblemError (validate) before computing anything.
Result run_twin(const Problem& problem, const Config& config);

}  // namespace ssmv::chunk_scan
