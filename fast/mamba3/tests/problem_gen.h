// Random problems for the bundled Mamba-3 step's tests (GPU = twin, thread counts): shapes biased
// toward odd edges (P and N not multiples of 32, P = 16, R from 1 to N/2, G from 1 to H), 1 to 4
// sequences of 1 to 12 tokens, bf16 or fp32 inputs and angles, bf16 or fp32 output, with and
// without D, z and an initial four-part state; data drawn like upstream's test
// (spec/mamba3/random_problem.h), fp32 inputs given full fp32 mantissas. One seed, one problem.
#pragma once

#include <cstdint>
#include <string>

#include "spec/mamba3/problem.h"

namespace ssmv::mamba3_step::testing {

struct GeneratedProblem {
  ssmv::mamba3::Problem problem;
  std::string description;  // shape, formats, options and the seed: enough to reproduce it
};

GeneratedProblem random_step_problem(uint64_t seed);

}  // namespace ssmv::mamba3_step::testing
