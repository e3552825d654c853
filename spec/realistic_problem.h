// Mamba2-realistic problems from a seed — the one seeded generator that ssmv's default suite,
// the tests and the benchmarks draw from (the property suites draw through rapidcheck,
// properties/gen/): A = −exp(U[log 1, log 16]); dt_bias = softplus⁻¹(dt0), dt0 log-uniform in
// [1e-3, 0.1]; dt ~ N(0, 0.5); x, B, C, z ~ N(0, 1); D ~ 1 + N(0, 0.1²); initial states
// ~ N(0, 0.1²). Values are drawn in double and rounded to their format. Deterministic:
// splitmix64 and our own Box–Muller (std:: distributions differ between standard libraries).
#pragma once

#include <cstdint>

#include "spec/problem.h"

namespace ssmv {

struct RealisticOptions {
  bool dt_softplus = true;
  bool dt_bias = true;
  DMode d_mode = DMode::per_head;
  bool z = true;
  bool initial_state = true;
};

// `shape` and `formats` are taken as given; the tensors are drawn.
Problem realistic_problem(const Shape& shape, const Formats& formats, uint64_t seed,
                          const RealisticOptions& options = {});

}  // namespace ssmv
