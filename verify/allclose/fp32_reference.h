// The fp32 reference that `allclose` tests of Mamba kernels compare against (mamba_ssm's
// selective_state_update_ref / selective_scan_ref style): the sequential recurrence of
// docs/design.md §2 evaluated token by token in fp32, every operation rounded to fp32 (no
// FMA: the build sets -ffp-contract=off), on the problem's inputs (exact in their format).
// It is *not* ground truth — its own rounding errors grow with T — but it is what today's
// kernel tests use; the certified reference is reference/reference.h.
//
// Per sequence s, head h, token t (float arithmetic, in this order):
//   v = dt + dt_bias;  δ = v > 20 ? v : log1p(exp(v)) if dt_softplus (torch's softplus,
//   threshold 20);  δ = clamp(δ, lo, hi);  dA = exp(δ·A)
//   S[p,n] = S[p,n]·dA + (δ·B[n])·x[p]
//   y[p] = Σ_n S[p,n]·C[n] (n ascending) + D·x[p];  y = y·(z / (1 + exp(−z))) if z is given
// y is returned unrounded (fp32), not rounded to the output format; the states likewise
// (fp32, not rounded to the state format).
#pragma once

#include <vector>

#include "spec/problem.h"

namespace ssmv::verify {

// Every value is an fp32 number, held in a double so that it compares directly with a
// kernel's decoded outputs (allclose.h).
struct Fp32Reference {
  std::vector<double> y;            // [T, H, P]
  std::vector<double> final_state;  // [S, H, P, N] (decode: per request; a pad request's too)
  std::vector<double> state_pool;   // [slots, H, P, N] decode only: the pool after the launch
};

// From problem.initial_state (zero without one).
Fp32Reference fp32_reference(const Problem& problem);
// Request r starts from pool[slot_in[r]] (zero for a pad request) and, unless it pads,
// writes its final state to pool[out_slot(r)]; other slots keep their values.
Fp32Reference fp32_reference(const DecodeProblem& decode);

}  // namespace ssmv::verify
