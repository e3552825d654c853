// The precision contract of mamba_ssm's Mamba-3 SISO prefill (mamba3_siso_combined at
// e9594ce1c732: angle_dt_fwd_kernel, then mamba3_siso_fwd_kernel, chunked) as data: the formats
// it stores between its stages, the dots' models, the budgets of its transcendentals. The bound
// that reads it: prefill_bound.h; where every default comes from: docs/mamba3-bounds.md, part II.
#pragma once

#include <string>

#include "spec/contract.h"  // TranscendentalBudget
#include "spec/format.h"

namespace ssmv::bound::mamba3 {

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

// "mamba3_siso_combined.production": the kernels on an H200 as Triton 3.6 compiles them, θ stored
// in bf16 as shipped; tanh, cos, sin and exp2 budgets measured on the H200 (docs/measurements/
// mamba3-transcendentals.md), sigmoid and silu from docs/measurements/triton-budgets.md.
PrefillContract prefill_production_h200();
// "mamba3_siso_combined.fp32_angles": the same kernels' budgets with θ kept in fp32 (as the step
// kernel keeps it). mamba_ssm's prefill as shipped stores θ in bf16 and may exceed it.
PrefillContract prefill_fp32_angles();
// "mamba3_siso_combined.host_emulation": prefill_emulation.h with the C++ library's functions.
PrefillContract prefill_host_emulation();

}  // namespace ssmv::bound::mamba3
