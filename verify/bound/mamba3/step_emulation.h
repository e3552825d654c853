// A host emulation of the arithmetic of mamba_ssm's Mamba-3 SISO decode step kernel (Triton
// mamba3_siso_step_kernel, mamba3_siso_step.py at e9594ce1c732), one launch per token: the same
// fp32 operations in the same order with the same rounding points (docs/mamba3-bounds.md §2 lists
// them with the kernel's lines), contraction off (the project compiles with -ffp-contract=off),
// and the state stored in the problem's state format after every token. What differs from the
// GPU, by design:
//   * transcendentals through the C++ library's fp32 functions (std::tanh, std::cos, std::sin,
//     std::exp2 on floats) instead of tanh.approx / cos.approx / sin.approx / ex2.approx, and
//     IEEE division instead of div.full.f32 (Transcendentals below lets a test substitute them);
//   * the C·S dot sums its (exact) bf16 products sequentially in fp32 in increasing n instead of
//     on tensor cores — one of the orders the bound allows.
// It is the bound's test object (tests/step_bound_test.cpp), not a model of the GPU's bits.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "spec/format.h"
#include "spec/mamba3/problem.h"

namespace ssmv::bound::mamba3 {

// The fp32 functions the emulation evaluates (defaults: the C++ library's).
struct Transcendentals {
  std::function<float(float)> tanh;     // the angle rate (tanh_approx, line 150)
  std::function<float(float)> cos, sin;  // of the reduced angle (lines 162–163)
  std::function<float(float)> exp2;     // α = exp2(fl(adt·log2e_f)) (line 189)
  std::function<float(float)> sigmoid;  // tl.sigmoid (λ, line 187; the gate's silu, line 219)
};
Transcendentals library_transcendentals();
// tl.sigmoid as Triton lowers it (triton-budgets.md): 1 / (1 + exp2(−x·log2e_f)) in fp32.
float sigmoid_f32(float x);

// Deliberate defects, for the tests that show the bound catches bugs.
enum class PlantedBug {
  none,
  beta_uses_current_b,        // β·x_prev ⊗ b instead of ⊗ b_prev
  beta_without_decay,         // β = dt·(1 − λ), α left out
  angle_state_ignored,        // θ = π·tanh(angle)·dt, the carried angle not added
  state_rounded_before_update,  // the carried fp32 state rounded to bf16 before α·S (fp32 state)
  // The z gate's σ as 0.5·tanh(0.5·z) + 0.5 with a tanh of 11 significant bits (relative error up
  // to 2^-11, the PTX ISA's figure for tanh.approx: mamba_ssm's commented-out silu form). Small
  // enough to stay within y's bound; for the sharp verdict.
  gate_via_tanh_approx,
  angle_stored_bf16,       // the angle state stored in bf16 between tokens (as the prefill's θ is)
  crude_exp2,              // α = exp2(·) kept to 12 significant bits (a cheap exp2: 2^-12 relative)
  rotation_pairs_halves,   // B and C turned in pairs (r, r + N/2) instead of (2r, 2r + 1)
};

struct EmulationOptions {
  Format dot_operands = Format::bf16;  // what S and c are rounded to before C·S (fp32: not rounded)
  Transcendentals fns = library_transcendentals();
  PlantedBug bug = PlantedBug::none;
  // Contract every multiply-add the source allows into one fmaf, as Triton's default
  // enable_fp_fusion may: θ = fma(t·PI, dt, θ_prev), θ − 2π·k, the turn's second product, the
  // update's fma(γ·x, b, d1) and fma(S, α, diff), the dot's accumulation, fma(D, x, y).
  bool fused = false;
  // The Monte Carlo runs of the sharp verdict (verify/family/mamba3/sharp.h): every fp32
  // operation's result v (computed exactly in double) moved by a uniform error in ±u|v|,
  // u = 2^-24 (at least round to nearest's half ULP; its variance u²v²/3 bounds RN's from above),
  // then stored as the fp32 nearest; the draws from this seed, in the operations' order. 0: none
  // (the plain fp32 arithmetic above, bit for bit).
  uint64_t noise_seed = 0;
};

struct EmulatedSteps {
  std::vector<float> y;       // [T, H, P] in the output format
  std::vector<float> angle;   // [S, H, R] fp32, as the kernel stores it (reduced)
  std::vector<float> S;       // [S, H, P, N] state format
  std::vector<float> B_prev;  // [S, H, N]    state format
  std::vector<float> x_prev;  // [S, H, P]    state format
};

// Runs every sequence of `pr` token by token from its initial four-part state (zeros without
// one). Throws ssmv::ProblemError for an invalid problem (spec/mamba3/problem.h validate).
EmulatedSteps emulate_steps(const ssmv::mamba3::Problem& pr, const EmulationOptions& options = {});

}  // namespace ssmv::bound::mamba3
