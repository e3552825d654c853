// The built-in default problem of `ssmv reference`: Mamba2-realistic data, small enough to
// certify in well under a second. Deterministic: the same bits on every machine that has
// the same libm (values are drawn in double and rounded to their format).
#pragma once

#include <cstdint>

#include "spec/problem.h"

namespace ssmv::cli {

// Two sequences (37 and 64 tokens: one below, one at a chunk-size edge), H = 4, P = 16,
// N = 32, G = 2, bf16 inputs, fp32 state, bf16 output, dt_softplus with dt_bias, D per
// head, z gate, random initial states; data as spec/realistic_problem.h draws it.
Problem default_problem(uint64_t seed = 2026);

}  // namespace ssmv::cli
