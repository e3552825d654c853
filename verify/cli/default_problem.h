// The built-in default problem of `ssmv reference`: Mamba2-realistic data, small enough to
// certify in well under a second. Deterministic: the same bits on every machine that has
// the same libm (values are drawn in double and rounded to their format).
#pragma once

#include <cstdint>

#include "spec/problem.h"

namespace ssmv::cli {

// Two sequences (37 and 64 tokens: one below, one at a chunk-size edge), H = 4, P = 16,
// N = 32, G = 2, bf16 inputs, fp32 state, bf16 output, dt_softplus with dt_bias, D per
// head, z gate, random initial states. A = −exp(U[log 1, log 16]); dt_bias =
// softplus⁻¹(dt0) with dt0 log-uniform in [1e-3, 0.1]; x, B, C, z ~ N(0, 1); dt ~ N(0, 0.5).
Problem default_problem(uint64_t seed = 2026);

}  // namespace ssmv::cli
