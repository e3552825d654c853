// The host twin of the SSU kernel: the same per-thread arithmetic (arithmetic.h), in the
// same order, with the same rounding points, on the CPU. Its outputs equal the GPU's bit
// for bit (tests/gpu_test.cu); CI and property tests run it where no GPU exists.
#pragma once

#include <array>

#include "fast/ssu/arithmetic.h"
#include "fast/ssu/check.h"
#include "fast/ssu/params.h"
#include "fast/ssu/ssu.h"

namespace ssmv::ssu {

// Runs the launch described by `p`, whose pointers refer to host memory. Checks
// check_params and check_indices first (throws ProblemError before writing anything).
// Writes y and the pool slots the launch writes; format conversions by spec/format.h.
// `threads` worker threads over (request, head) (0: every core): the same bits for any count.
void run_twin(const Params& p, int threads = 0);

// `d` packed (pack.h) and run by run_twin(Params). Every Variant gives these bits.
Result run_twin(const DecodeProblem& d, const Config& config = {});

// The row sum of the L lane partials v[0 .. L) (L = 16 or 32: lane_layout), as every kernel
// forms it: an xor butterfly of fp32 adds.
float butterfly_sum(std::array<float, kWarp> v, int L);

}  // namespace ssmv::ssu
