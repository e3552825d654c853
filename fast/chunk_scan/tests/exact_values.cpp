#include "fast/chunk_scan/tests/exact_values.h"

#include <cmath>

#include "reference/reference.h"

namespace ssmv::chunk_scan::testing {

ExactDoubles exact_values(const Problem& pr, const ChunkPlan& plan) {
  const Shape& sh = pr.shape;
  const int64_t T = sh.num_tokens(), H = sh.H;
  ref::Options options;
  for (int64_t c = 0; c < plan.num_chunks(); ++c) options.state_positions.push_back(plan.start[c] + plan.len[c]);
  const ref::ExactResult e = ref::compute(pr, options);
  ExactDoubles r;
  r.y = e.y.nearest;
  r.y_mag = e.y.magnitude;
  r.final_state = e.final_state.nearest;
  r.final_mag = e.final_state.magnitude;
  for (const ref::StateAt& at : e.states_at) {
    r.boundary.insert(r.boundary.end(), at.state.nearest.begin(), at.state.nearest.end());
    r.boundary_mag.insert(r.boundary_mag.end(), at.state.magnitude.begin(), at.state.magnitude.end());
  }
  r.delta = e.delta;
  // Bound on |δ̂ − δ| of the fp32 evaluation: the bias add (u·|v|) carried through
  // softplus' = σ(v) ≤ 1, plus softplus's 1.6 ULP budget (≤ 3.2u relative; fast_math_budgets.h); clamping is
  // 1-Lipschitz.
  const double u = 0x1p-24;
  r.delta_abs_err.assign(T * H, 0.0);
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t h = 0; h < H; ++h) {
      const double v = double(pr.dt[t * H + h]) + (pr.has_dt_bias() ? double(pr.dt_bias[h]) : 0.0);
      double err = pr.has_dt_bias() ? u * std::fabs(v) : 0.0;
      if (pr.dt_softplus) err = err / (1.0 + std::exp(-v)) + 3.2 * u * r.delta[t * H + h];
      r.delta_abs_err[t * H + h] = err;
    }
  }
  return r;
}

}  // namespace ssmv::chunk_scan::testing
