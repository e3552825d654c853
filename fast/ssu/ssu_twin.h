// The host twin of the SSU kernel: the same per-thread arithmetic (ssu_math.h), in the
// same order, with the same rounding points, on the CPU. Its outputs equal the GPU's bit
// for bit (tests/ssu_gpu_test.cpp); CI and property tests run it where no GPU exists.
#pragma once

#include "fast/ssu/ssu_check.h"
#include "fast/ssu/ssu_params.h"

namespace ssmv::ssu {

// Runs the launch described by `p`, whose pointers refer to host memory. Checks
// check_params and check_indices first (throws ProblemError before writing anything).
// Writes y and the pool slots the launch writes; format conversions by spec/format.h.
// `threads` worker threads over (request, head) (0: every core): the same bits for any count.
void run_twin(const Params& p, int threads = 0);

}  // namespace ssmv::ssu
