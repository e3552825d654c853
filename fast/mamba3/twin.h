// The host twin of the bundled Mamba-3 step kernel: the same per-thread arithmetic (arithmetic.h),
// in the same order, with the same rounding points, on the CPU. Its outputs equal the GPU's bit
// for bit (tests/gpu_test.cu); CI runs it where no GPU exists.
#pragma once

#include "fast/mamba3/params.h"
#include "fast/mamba3/step.h"

namespace ssmv::mamba3_step {

// Runs the launch `p` (host pointers) after check_params. `threads` workers over (sequence, head)
// (0: every core): each writes only its own state and y rows, so the bits do not depend on it.
void run_twin(const Params& p, int threads = 0);

// Every launch of `pr` (pack.h) on the twin.
Result run_twin(const ssmv::mamba3::Problem& pr, int threads = 0);

}  // namespace ssmv::mamba3_step
