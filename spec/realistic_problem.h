// Mamba2-realistic problems from a seed — the one seeded generator that ssmv's default suite,
// the tests and the benchmarks draw from (the property suites draw through rapidcheck,
// properties/gen/). Per head: A = −exp(U[log 1, log 16]) and a target δ0 log-uniform in
// [1e-3, 0.1], reached through dt and dt_bias as the options allow (below); x, B, C, z ~
// N(0, 1) in the input format; D ~ 1 + N(0, 0.1²); initial states ~ N(0, 0.1²) in the state
// format. Values are drawn in double and rounded to their format. Deterministic: splitmix64
// and our own Box–Muller (std:: distributions differ between standard libraries), one
// stream per tensor, so that switching an option leaves the other tensors' values alone.
#pragma once

#include <cstdint>

#include "spec/problem.h"

namespace ssmv {

// How δ = [softplus](dt + dt_bias) reaches δ0 (always δ > 0, so that δ·A ≤ 0):
//   softplus, bias:       dt_bias = softplus⁻¹(δ0), dt ~ N(0, 0.5²);
//   softplus, no bias:    dt = softplus⁻¹(δ0) + N(0, 0.5²);
//   no softplus, bias:    dt_bias = δ0/2, dt = δ0·U[0, 1);
//   no softplus, no bias: dt = δ0·(1/2 + U[0, 1)).
struct RealisticOptions {
  bool dt_softplus = true;
  bool dt_bias = true;
  DMode d_mode = DMode::per_head;
  bool z = true;
  bool initial_state = true;
};

// `shape` and `formats` are taken as given; the tensors are drawn. dt_limit is left open. The
// input-format tensors (x, dt, B, C, z) come narrowed to the input format, as a dump's: a
// caller that edits one element by element starts from loose copies (FormatValues(v.to_vector())).
Problem realistic_problem(const Shape& shape, const Formats& formats, uint64_t seed,
                          const RealisticOptions& options = {});

}  // namespace ssmv
