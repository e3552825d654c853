// Random chunk_scan problems for the tests: Mamba2-realistic data (spec/realistic_problem.h)
// on varlen layouts biased toward chunk edges (lengths 1, L−1, L, L+1), with every option
// of the kernel switchable. Deterministic: seeded by the caller.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "spec/problem.h"

namespace ssmv::chunk_scan::testing {

struct GenOptions {
  Format input = Format::bf16;
  Format state = Format::fp32;
  Format output = Format::bf16;
  int64_t H = 2, P = 16, N = 16, G = 1;
  std::vector<int64_t> seq_lens;  // lengths of the packed sequences
  bool softplus = true;
  bool dt_bias = true;
  bool z = false;
  bool D = true;
  bool D_per_dim = false;
  bool initial_state = false;
  float dt_limit_lo = -std::numeric_limits<float>::infinity();
  float dt_limit_hi = std::numeric_limits<float>::infinity();
};

Problem make_problem(const GenOptions& o, uint64_t seed);

// A random configuration (shape, lengths near chunk edges, options, formats) for chunk
// size L, sized for a fast twin: T ≤ max_tokens, P·N ≤ 64·64 except rarely.
GenOptions random_options(std::mt19937_64& rng, int64_t L, int64_t max_tokens);

// "T=..,H=..,P=..,N=..,G=..,in=bf16,..." for failure messages.
std::string describe(const Problem& p);

}  // namespace ssmv::chunk_scan::testing
