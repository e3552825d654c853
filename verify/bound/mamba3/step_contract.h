// The precision contract of mamba_ssm's Mamba-3 SISO decode step kernel (Triton
// mamba3_siso_step_kernel, mamba_ssm/ops/triton/mamba3/mamba3_siso_step.py at e9594ce1c732) as
// data: the format of the operands of its C·S product, the dot's accumulation, the error budgets
// of its transcendentals and of its division, and the constants it multiplies by. The bound that
// reads it: step_bound.h; the derivation and where every default comes from: docs/mamba3-bounds.md.
#pragma once

#include <string>

#include "spec/contract.h"  // TranscendentalBudget
#include "spec/format.h"

namespace ssmv::bound::mamba3 {

// The fp32 constants the kernel multiplies by (Triton turns Python float literals into fp32):
// PI = 3.141592653589793 (line 128) -> 3.14159274101257324..., TWO_PI = 2·PI -> 2·that (exact),
// 1.44269504089 (line 185) -> 1.44269502162933349... = fp32(log2 e), the constant of tl.exp's
// lowering (docs/measurements/triton-budgets.md: mul.f32 by 0f3FB8AA3B).
inline constexpr float kPiF32 = float(3.141592653589793);
inline constexpr float kTwoPiF32 = float(2 * 3.141592653589793);
inline constexpr float kLog2eF32 = float(1.44269504089);

struct StepContract {
  std::string name;
  // The operands of y = C·S: the kernel rounds the fp32 state and the rotated C to bf16
  // (`tl.dot(ssm_state.to(tl.bfloat16), q_block...to(tl.bfloat16))`, line 207). fp32: no
  // rounding (a variant that keeps them in fp32 and reduces with fp32 FMAs, not tf32).
  Format dot_operands = Format::bf16;
  // The dot may run on tensor cores (the truncating w16_a26_rz model measured for tl.dot in
  // docs/measurements/triton-dot.md): the bound then takes the larger of that model and a chain
  // of fp32 FMAs in any order. false: only the FMA chain.
  bool dot_tensor_cores = true;
  // Budgets, |computed − exact| ≤ (ulp_const + ulp_per_abs_arg·|x|)·ulp_fp32(exact) + abs_error
  // for x in [arg_lo, arg_hi] (spec/contract.h). `exp` is the whole of exp2(fl(adt·log2e_f)),
  // the argument's product included, as a function of adt; `silu` the whole of z·σ(z).
  TranscendentalBudget tanh, cos, sin, exp, sigmoid, silu;
  // Relative error of the fp32 division θ/TWO_PI of the angle's reduction (line 156);
  // div.full.f32: 2 ULP, at most 2^-22 relative.
  double division_rel = 0x1p-22;
};

// A budget of `f`: (c0 + c1·|x|) ULP + abs on [lo, hi], with where its figures come from.
TranscendentalBudget make_budget(const char* f, double c0, double c1, double abs, double lo, double hi,
                                 const char* how);

// The kernel on an H200 as Triton 3.6 compiles it: cos/sin/tanh through the PTX approximations
// (their PTX ISA error figures, not measured by ssmv), exp, sigmoid and silu as measured in
// docs/measurements/triton-budgets.md (exp only for adt <= 0: the bound refuses adt > 0 under
// this contract), division div.full.f32.
StepContract production_h200();

// The host emulation (step_emulation.h): every transcendental through the C++ library's fp32
// functions (std::tanh, std::cos, std::sin, std::exp2 on floats); budgets derived in
// docs/mamba3-bounds.md §10 and checked by tests/emulation_budget_test.cpp; exp covers adt > 0
// as well; the division is IEEE (½ ULP).
StepContract host_emulation();

}  // namespace ssmv::bound::mamba3
