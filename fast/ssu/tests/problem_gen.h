// Random SSU decode problems for the tests and the benchmark: Mamba2-realistic values
// (spec/realistic_problem.h), every option of the kernel switchable, slot layouts with pads,
// repeated reads and separate destinations, a pool of states ~ N(0, 2²) in the state
// format. Deterministic in the seed.
#pragma once

#include <cstdint>
#include <string>

#include "fast/ssu/ssu.h"
#include "spec/problem.h"

namespace ssmv::ssu::testing {

struct ProblemConfig {
  int64_t requests = 2;
  int64_t max_tokens = 1;  // tokens per request drawn from [min_tokens, max_tokens]
  int64_t min_tokens = 1;
  int64_t H = 2, P = 4, N = 8, G = 1;
  Formats formats;
  bool dt_softplus = true;
  bool dt_bias = true;
  bool dt_limit = false;          // clamp δ to [1e-3, 0.05] (bites on some tokens)
  DMode d_mode = DMode::per_head;
  bool z = true;
  double pad_fraction = 0.0;      // chance that a request is a pad request
  bool repeated_reads = false;    // requests may share a read slot (then slot_out is used)
  bool separate_out = false;      // slot_out given even without repeated reads
  bool token_states = false;      // per-token state slots (speculative decoding)
  int64_t pad_slot_id = -1;       // -1, or any id >= slots ("slots" picks the first one)
  bool random_pool = true;        // false: the pool starts at zero (fast set-up for benchmarks)
};

struct GeneratedProblem {
  DecodeProblem decode;
  Config config;
  std::string description;  // the configuration, for failure messages
};

GeneratedProblem make_problem(const ProblemConfig& c, uint64_t seed);

// A random configuration: formats, options, odd and edge sizes (P, N from 1 to 256 with
// tile and warp edges ± 1), small enough for the twin to run in a few milliseconds.
ProblemConfig random_config(uint64_t seed);

}  // namespace ssmv::ssu::testing
