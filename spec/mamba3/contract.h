// The precision contracts of the Mamba-3 SISO kernels as data (the Mamba-3 counterpart of
// spec/contract.h's Contract): StepContract for a decode step kernel (mamba_ssm's Triton
// mamba3_siso_step_kernel, mamba_ssm/ops/triton/mamba3/mamba3_siso_step.py at e9594ce1c732, and the
// bundled fast/mamba3/), PrefillContract for the chunked prefill (mamba3_siso_combined at
// e9594ce1c732: angle_dt_fwd_kernel, then mamba3_siso_fwd_kernel). Plain data and no MPFR, no
// CUDA: fast/mamba3/contract.h declares the bundled kernel's contract with these types; the bounds
// that read them are verify/bound/mamba3/step_bound.h and prefill_bound.h, the presets of
// mamba_ssm's kernels verify/bound/mamba3/step_contract.h and prefill_contract.h. Where every
// default comes from: docs/mamba3-bounds.md (parts I and II).
#pragma once

#include <string>

#include "spec/contract.h"  // TranscendentalBudget
#include "spec/format.h"

namespace ssmv::mamba3 {

// Line numbers below are mamba3_siso_step.py's (the constants, StepContract) and angle_dt.py's
// (PrefillContract), both at e9594ce1c732.

// The fp32 constants the step kernel multiplies by (Triton turns Python float literals into fp32):
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

struct PrefillContract {
  std::string name;
  // The cumulative angle θ of every token and the returned angle state: angle_dt_fwd allocates
  // both with the dtype of Angles (angle_dt.py: `empty_like(angle)`, `dtype=angle.dtype`), and
  // mamba3_siso_combined casts Angles to bf16 first — so as shipped θ in [0, 2π) is stored in bf16
  // (half an ULP: up to 2^-6 rad) before cos/sin read it (docs/mamba3-semantics.md §7 question 1).
  // fp32: θ kept in fp32, as the step kernel keeps its angle state.
  Format angle_store = Format::bf16;
  // Q_store and K_store, the turned c and the turned, scaled b that phase 2 reloads: allocated
  // with Q's and K's dtype (bf16 after the wrapper's cast) — the operands of the bf16 dots.
  Format qk_store = Format::bf16;
  // What the fp32 state (before q·Sᵀ), the causal weights (before s·v) and the decayed x (before
  // vᵀ·k) are rounded to: `.to(q_block.dtype)`, `.to(v_block.dtype)`, `.to(k_block.dtype)` (bf16).
  Format dot_operands = Format::bf16;
  // The dots of those operands may run on tensor cores (the truncating w16_a26_rz model measured
  // for tl.dot, docs/measurements/triton-dot.md): the bound takes the larger of that model and an
  // fp32 FMA chain in any order. false: only the FMA chain.
  bool dot_tensor_cores = true;
  // The diagonal term Σ_n fl(q_n·k_n) (`tl.dot(q_pre * k_pre, ones[N, 1])`, fp32 operands) runs,
  // on an H200 with Triton 3.6, on mma.sync.m16n8k8.tf32 fed the fp32 products without a
  // cvt.rna.tf32: each product truncated to tf32 (below 2^-10 relative) before a tensor-core sum.
  // false: an fp32 FMA chain.
  bool qk_dot_tf32 = true;
  // Budgets |computed − exact| ≤ (ulp_const + ulp_per_abs_arg·|x|)·ulp_fp32(exact) + abs_error on
  // [arg_lo, arg_hi] (spec/contract.h). `exp2` is the instruction alone, 2^w of the fp32 argument
  // w it is given (the kernel's fl(adt·log2e_f) and their sums); `silu` the whole of z·σ(z).
  TranscendentalBudget tanh, cos, sin, exp2, sigmoid, silu;
  // The fp32 division θ/TWO_PI of the angle's reduction (angle_dt.py lines 108, 117).
  double division_rel = 0x1p-22;
};

// A budget of `f`: (c0 + c1·|x|) ULP + abs on [lo, hi], with where its figures come from.
TranscendentalBudget make_budget(const char* f, double c0, double c1, double abs, double lo, double hi,
                                 const char* how);

}  // namespace ssmv::mamba3
