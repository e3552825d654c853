// rapidcheck generators of Mamba-3 SISO step problems (spec/mamba3/problem.h) with the
// magnitudes upstream's test draws (tests/ops/triton/test_mamba3_siso.py,
// create_mamba3_siso_inputs; reference/mamba3/tests/test_problem.h draws the same from a fixed
// seed): x, B, C, z, trap, angles ~ N(0, 1) in bf16; dt log-uniform in [1e-3, 0.1] (fp32);
// adt = −a·dt with a uniform in [1, 16] (the product rounded to fp32); B_bias, C_bias, D
// ~ N(0, 1) in fp32; an initial four-part state with θ uniform in [0, 6.28) and S, B_prev,
// x_prev ~ N(0, 1) in the state format.
//
// Shapes are drawn first (so that shrinking a later pick keeps them) and shrink toward one
// sequence of one token, G = H = 1, P = 1, N = 4, R = 2: G ∈ {1, 2}, H = G·{1, 2}, P in
// [1, 8], N even in [4, 32], R even in [2, N/2] (both kernel wrappers assert an even R,
// docs/mamba3-semantics.md), then 1–3 sequences of min_len–8 tokens, capped at max_updates
// state updates T·H·P·N (the certified reference is one thread, about 3 µs an update here);
// one case in long_share is one sequence of 16–128 tokens (the angle wraps past 2π, errors
// carried over many steps) within 4·max_updates, shrinking toward a short case.
// Options shrink toward off: D, z, the initial state; the state format toward fp32, the output
// toward bf16. Values shrink toward 0, ±1 and powers of two in their format (float_gen.h),
// dt toward 2^-4 (it stays in [1e-3, 0.1] and non-zero), a toward 1, θ toward 0.
#pragma once

#include <rapidcheck.h>

#include <cstdint>
#include <iosfwd>
#include <string>

#include "spec/mamba3/problem.h"

namespace ssmv::prop::mamba3 {

// A long case: one sequence of kLongMin to kLongMax tokens (at most 4·max_updates updates).
inline constexpr int64_t kLongMin = 16, kLongMax = 128;

struct StepOptions {
  int64_t min_len = 1;          // every sequence at least this long
  int64_t max_len = 8;
  int64_t max_sequences = 3;
  int64_t max_updates = 2048;   // cap on T·H·P·N (a long case: 4× this)
  int64_t long_share = 16;      // one case in this many is long (0: none)
};

struct GeneratedStep {
  ssmv::mamba3::Problem problem;
};

// Every problem validates (spec/mamba3 validate) and lies inside the host-emulation contract's
// budget ranges.
rc::Gen<GeneratedStep> step_problem(const StepOptions& options = {});

// Counts the case's shape and options for the property's features line and tags it
// (RC_TAG: state and output format).
void label_case(const GeneratedStep& g);
void label_problem(const ssmv::mamba3::Problem& p);

// One line: shape, formats, options; for a small problem (at most 64 values per tensor, as a
// shrunk counterexample is) every value as a C99 hex float, so the printed case is complete.
std::string describe(const ssmv::mamba3::Problem& p);
void showValue(const GeneratedStep& g, std::ostream& os);

}  // namespace ssmv::prop::mamba3
