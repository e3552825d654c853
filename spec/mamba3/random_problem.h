// Mamba-3 SISO problems drawn like upstream's test (mamba_ssm tests/ops/triton/test_mamba3_siso.py,
// create_mamba3_siso_inputs), for the tests and for `ssmv bounds`' Mamba-3 rows
// (verify/family/mamba3/bounds_rows.h). No MPFR.
#pragma once

#include <cstdint>
#include <vector>

#include "spec/mamba3/problem.h"

namespace ssmv::mamba3 {

// Every tensor zero (fp32 formats), no D, no z, no initial state.
Problem zero_problem(std::vector<int64_t> cu, int64_t H, int64_t P, int64_t N, int64_t G, int64_t R);

// Draws like upstream's test: x, B, C, z, trap, angles bf16 N(0,1); dt log-uniform in [1e-3, 0.1];
// adt = −a·dt with a uniform in [1, 16]; biases fp32 N(0,1); D fp32; an initial four-part state
// when asked (θ uniform in [0, 6.28), S, b_prev, x_prev fp32 N(0,1)). Formats: bf16 inputs and
// angles, fp32 state, bf16 output. The same values for a seed on every platform with the same
// standard library (std::mt19937_64, std::normal_distribution).
Problem random_problem(std::vector<int64_t> cu, int64_t H, int64_t P, int64_t N, int64_t G, int64_t R, uint64_t seed,
                       bool with_initial_state);

}  // namespace ssmv::mamba3
