// Provisional per-element bound for the CPU tests of the chunk_scan twin, until verify/
// derives the real one (../../docs/bounds.md "Chunked family"). First order, with
// u = 2^-24, u_in the unit roundoff of the input format under the production contract (0
// under fp32), and the magnitudes of the exact recurrence on absolute values (Sabs, and
// M = |zσ(z)|·(Σ_n|C_n|·Sabs_n + |D·x|) for y). Every relative error below multiplies a
// term whose absolute value is bounded by M (for y) or Sabs (for states).
//
//  * δ: the bias add (u·|v|), carried through softplus' = σ(v) ≤ 1, plus softplus's
//    1.6 ULP (≤ 3.2u relative); clamping is 1-Lipschitz. Δδ_k from run_double.
//  * cumulative sums (sequential): |Δcs| ≤ E_cs = Σ_j (u·|cs_j| + |A|·Δδ_j + u·|δ_j·A|)
//    over the chunk; a decay exp(cs_m − cs_k) then errs by ≤ 2·E_cs + 2u relative
//    (exp ≤ 1.0 ULP ≤ 2u, fast_math_budgets.h), and a term's δ_k factor by ε_δ = max_k Δδ_k/δ_k.
//  * per chunk: e_chunk = 2·E_cs + 2u + ε_δ + 4u (the four fp32 products forming the
//    scale and the weights).
//  * reductions: an mma step of m16n8k16 (docs/design.md §4) truncates ≤ 17 terms below
//    2^(E−26) with 2^E ≤ 2·max|term| and rounds toward zero (< 2u): ≤ 10.5u·Σ|terms of
//    the step, accumulator included|; a chain of s steps ≤ 10.5u·s·Σ|terms|. Sequential
//    fmaf over K terms: ≤ K·u·Σ|terms| (γ_K). Here s = ⌈N/16⌉ + ⌈L/16⌉ + 1 and K = N + L + 1
//    cover both the chunk state and the output chains.
//  * state after chunk c: K_state(c) = Σ_{c' ≤ c} (e_chunk(c') + u) + κ_red + u_in
//    (decay errors of every later chunk scale all earlier contributions; one fma per
//    chunk; the scaled B rounded to the input format).
//  * y in chunk c: K_y = K_state(c − 1) + e_chunk(c) + κ_red + 3·u_in + 8u (incoming
//    state and weights rounded to the input format; ×exp(cs_m), fma with D, z·σ(z) with
//    σ ≤ 1.52 ULP, and the gate product).
//  * the stored value: ½ ULP of the output (state) format at |exact| + bound.
// A safety factor 1 + 2^-6 covers the dropped second-order terms.
#include <algorithm>
#include <cmath>

#include "fast/chunk_scan/tests/exact_values.h"

namespace ssmv::chunk_scan::testing {

Bounds provisional_bounds(const Problem& pr, const ChunkPlan& plan, const ExactDoubles& d,
                          ContractKind contract) {
  const Shape& sh = pr.shape;
  const int64_t T = sh.num_tokens(), H = sh.H, P = sh.P, N = sh.N, L = plan.chunk_size;
  const int64_t NC = plan.num_chunks();
  const double u = 0x1p-24;
  const double u_in =
      contract == ContractKind::production ? format_info(pr.formats.input).unit_roundoff : 0.0;
  const bool mma = uses_mma(contract, pr.formats.input);
  const double kappa_red = mma ? 10.5 * u * double((N + 15) / 16 + (L + 15) / 16 + 1)
                               : u * double(N + L + 1);
  const double safety = 1.0 + 0x1p-6;

  // K_state after each chunk, and K_y of each chunk, per head: [NC, H].
  std::vector<double> k_state(NC * H), k_y(NC * H);
  for (int64_t h = 0; h < H; ++h) {
    double running = 0;  // Σ over the sequence's chunks so far of (e_chunk + u)
    for (int64_t c = 0; c < NC; ++c) {
      if (c == plan.first_chunk[plan.seq[c]]) running = 0;
      double cs = 0, e_cs = 0, eps_delta = 0;
      const double A = std::fabs(double(pr.A[h]));
      for (int64_t j = 0; j < plan.len[c]; ++j) {
        const int64_t t = plan.start[c] + j;
        const double delta = d.delta[t * H + h], ddelta = d.delta_abs_err[t * H + h];
        cs += delta * A;
        e_cs += u * cs + A * ddelta + u * delta * A;
        if (delta > 0) eps_delta = std::max(eps_delta, ddelta / delta);
      }
      const double e_chunk = 2 * e_cs + 2 * u + eps_delta + 4 * u;
      const double before = running;  // K_state(c − 1) without its constant part
      running += e_chunk + u;
      const bool first = c == plan.first_chunk[plan.seq[c]];
      k_y[c * H + h] = (first && !pr.has_initial_state() ? 0.0 : before + kappa_red + u_in) +
                       e_chunk + kappa_red + 3 * u_in + 8 * u;
      k_state[c * H + h] = running + kappa_red + u_in;
    }
  }
  auto finish = [&](Format f, double exact, double pre) {
    pre *= safety;
    return pre + 0.5 * ulp_of(f, std::fabs(exact) + pre);
  };
  Bounds b;
  b.y.resize(T * H * P);
  for (int64_t c = 0; c < NC; ++c) {
    for (int64_t t = plan.start[c]; t < plan.start[c] + plan.len[c]; ++t) {
      for (int64_t h = 0; h < H; ++h) {
        for (int64_t p = 0; p < P; ++p) {
          const int64_t i = pr.x_index(t, h, p);
          b.y[i] = finish(pr.formats.output, d.y[i], k_y[c * H + h] * d.y_mag[i]);
        }
      }
    }
  }
  b.boundary.resize(NC * H * P * N);
  for (int64_t c = 0; c < NC; ++c) {
    for (int64_t h = 0; h < H; ++h) {
      for (int64_t e = 0; e < P * N; ++e) {
        const int64_t i = (c * H + h) * P * N + e;
        b.boundary[i] = finish(pr.formats.state, d.boundary[i], k_state[c * H + h] * d.boundary_mag[i]);
      }
    }
  }
  b.final_state.resize(d.final_state.size());
  for (int64_t s = 0; s < sh.num_sequences(); ++s) {
    const int64_t c = plan.first_chunk[s + 1] - 1;
    for (int64_t h = 0; h < H; ++h) {
      for (int64_t e = 0; e < P * N; ++e) {
        const int64_t i = (s * H + h) * P * N + e;
        b.final_state[i] = finish(pr.formats.state, d.final_state[i], k_state[c * H + h] * d.final_mag[i]);
      }
    }
  }
  return b;
}

}  // namespace ssmv::chunk_scan::testing
