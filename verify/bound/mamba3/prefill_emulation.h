// A host emulation of the arithmetic of mamba_ssm's Mamba-3 SISO prefill as mamba3_siso_combined
// runs it (e9594ce1c732): angle_dt_fwd_kernel (angle_dt.py: the cumulative angle, chunk by chunk,
// reduced to [0, 2π) and stored in the angle format), then mamba3_siso_fwd_kernel
// (mamba3_siso_fwd.py: phase 1 — gates, bias, turn, the stored Q_store/K_store/QK_store; phase 2 —
// per chunk, the inter-chunk term q·Sᵀ·exp2(cs), the causal intra-chunk term, the diagonal
// (D + qk)·v, the gate, the state update), with the same fp32 operations in the same order and
// the same rounding points; contraction off unless `fused`. What differs from the GPU, by design:
//   * transcendentals through the C++ library's fp32 functions (Transcendentals, step_emulation.h)
//     instead of tanh/cos/sin/ex2.approx, IEEE division instead of div.full.f32;
//   * every dot sums its products sequentially in fp32 (FMA when `fused`) in increasing index,
//     the diagonal's fp32 products too (truncated to tf32 first with qk_dot_tf32) — one of the
//     evaluations the bound allows;
//   * tl.cumsum and tl.sum add sequentially in increasing token order, over a chunk's real tokens
//     (the zero-filled rows of a partial last chunk add nothing).
// The problem's values are what the kernels read: the wrapper's bf16 casts are its input formats.
// It is the prefill bound's test object (tests/prefill_bound_test.cpp), not a model of the GPU's bits.
#pragma once

#include <cstdint>

#include "spec/format.h"
#include "spec/mamba3/problem.h"
#include "verify/bound/mamba3/step_emulation.h"  // Transcendentals, EmulatedSteps

namespace ssmv::bound::mamba3 {

// Deliberate defects of a chunked prefill, for the tests that show the bound catches bugs.
enum class PrefillBug {
  none,
  // The next token's dt and trap read as 0 at the chunk's end instead of the sequence's end: the
  // scale of each chunk's last token loses its (1 − λ_{t+1})·dt_{t+1} part.
  shifted_gamma_chunk_masked,
  angle_carry_dropped,         // the angle's running state not carried from one chunk to the next
  initial_trap_term_dropped,   // the initial state enters without dt_0·(1 − λ_0)·x_prev ⊗ b_prev
  intra_decay_off_by_one,      // the causal weight decays by exp2(cs_i − cs_{j−1}) (one token too many)
  state_update_undecayed,      // the state update forgets v·exp2(cs_last − cs_j)'s decay
  diagonal_dropped,            // the (i, i) term γ_i·(q·k)·x_i left out
};

struct PrefillEmulationOptions {
  int64_t chunk_size = 64;               // the kernel's CHUNK_SIZE (mamba3_siso_combined's default)
  Format angle_store = Format::bf16;     // θ and the returned angle state (PrefillContract)
  Format qk_store = Format::bf16;        // Q_store, K_store
  Format dot_operands = Format::bf16;    // the state, the causal weights, the decayed x before their dots
  // The diagonal's Σ_n fl(q_n·k_n) on a tf32 mma as the kernel compiles it on an H200 (PTX:
  // mma.sync.m16n8k8.f32.tf32.tf32.f32 fed the fp32 products without cvt.rna.tf32): each product
  // truncated to tf32 before an fp32 sum. false: the fp32 products summed in fp32.
  bool qk_dot_tf32 = false;
  Transcendentals fns = library_transcendentals();
  PrefillBug bug = PrefillBug::none;
  // Contract every multiply-add the source allows into one fmaf (the angle's reduction, the scale
  // dt_{t+1}·(1 − λ_{t+1}) + γ, the q·k products into their sum, the turn's second product, the
  // initial state's trapezoid term, the dots' accumulation, (D + qk)·x + acc), and sum the s·v and
  // vᵀ·k dots into what the source adds them to (acc_o; S·exp2(cs_last)), as Triton's combine pass
  // folds `c + tl.dot(a, b)` into the dot's accumulator whatever enable_fp_fusion says. false: the
  // source's literal order, each of those two dots summed from 0 and then added.
  bool fused = false;
  // As EmulationOptions::noise_seed (step_emulation.h): every fp32 operation's result moved by a
  // uniform ±2^-24 relative error from this seed. 0: none.
  uint64_t noise_seed = 0;
};

// y [T, H, P] in the output format; the final four-part state: angle in the angle store format
// (as a float), S, B_prev (the last token's turned b, fp32 in the kernel) and x_prev in the
// problem's state format. Throws ssmv::ProblemError for an invalid problem and
// std::invalid_argument for chunk_size < 1.
EmulatedSteps emulate_prefill(const ssmv::mamba3::Problem& pr, const PrefillEmulationOptions& options = {});

}  // namespace ssmv::bound::mamba3
