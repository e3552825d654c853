// Running error analysis of the sequential family; every step below is derived in
// docs/bounds.md §2 (the equation numbers in brackets refer to it).
#include "verify/bound/sequential_bound.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "verify/bound/error_model.h"

namespace ssmv::bound {
namespace {

double softplus(double v) { return v > 30 ? v + std::log1p(std::exp(-v)) : std::log1p(std::exp(v)); }
double sigmoid(double v) { return 1.0 / (1.0 + std::exp(-v)); }

// Per (token, head): the kernel's errors in δ and in a = exp(δ·A) [2.1–2.3].
struct StepErrors {
  double d_delta = 0;  // |δ̂ − δ|
  double d_decay = 0;  // |â − a|
};

StepErrors step_errors(const Problem& pr, const Contract& c, int64_t t, int64_t h, double delta,
                       double decay, double u, double eta) {
  StepErrors e;
  const double dt = pr.dt[pr.dt_index(t, h)];
  const double v = dt + (pr.has_dt_bias() ? pr.dt_bias[h] : 0.0);
  // [2.1] v̂ = fl(dt + dt_bias): one rounding when there is a bias, none otherwise.
  const double dv = pr.has_dt_bias() ? u * std::fabs(v) + eta : 0.0;
  double dd = dv;
  if (pr.dt_softplus) {
    // [2.2] |softplus(v̂) − softplus(v)| ≤ σ(max(v, v̂))·|v̂ − v|, plus the implementation's
    // budget (which includes the v > 20 → v shortcut where the contract allows it).
    const double sp = softplus(v + dv);
    dd = sigmoid(v + dv) * dv + transcendental_error(budget(c, "softplus"), v, sp);
  }
  // clamp is 1-Lipschitz: it never increases |δ̂ − δ|.
  e.d_delta = dd;
  const double A = pr.A[h];
  // [2.3] ŵ = fl(δ̂·A): |ŵ − δA| ≤ |A|·Δδ + u·|δ̂A| (+ underflow); â = exp(ŵ)(1 + budget).
  const double dw = std::fabs(A) * dd + u * std::fabs(A) * (std::fabs(delta) + dd) + eta;
  const double w = delta * A;
  const double a_hi = decay * std::exp(dw);
  e.d_decay = decay * std::expm1(dw) + transcendental_error(budget(c, "exp"), w, a_hi);
  return e;
}

}  // namespace

SequentialBounds sequential_bounds(const SequentialInput& in) {
  if (in.problem == nullptr || in.contract == nullptr || in.delta == nullptr || in.decay == nullptr) {
    throw std::invalid_argument("sequential_bounds: problem, contract, delta and decay are required");
  }
  const Problem& pr = *in.problem;
  const Contract& c = *in.contract;
  if (c.family != Family::sequential) {
    throw std::invalid_argument("contract '" + c.name + "' is not of the sequential family");
  }
  const Shape& s = pr.shape;
  const int64_t S = s.num_sequences(), T = s.num_tokens(), H = s.H, P = s.P, N = s.N;
  const int64_t state_size = S * H * P * N;
  if (!in.initial_state.empty() && int64_t(in.initial_state.size()) != state_size) {
    throw std::invalid_argument("sequential_bounds: initial_state has the wrong size");
  }
  if (!in.initial_error.empty() && int64_t(in.initial_error.size()) != state_size) {
    throw std::invalid_argument("sequential_bounds: initial_error has the wrong size");
  }

  const double u = format_info(c.accumulation).unit_roundoff;
  const double eta = underflow_floor(c.accumulation, c.flush_to_zero);
  const Format state_fmt = pr.formats.state, out_fmt = pr.formats.output;
  // [2.5] The reduction Σ_n C_n·Ŝ_n + D·x: each term passes through at most
  // product_sum_roundings roundings in the contract's order, one more for adding D·x. An
  // undeclared y sum is one sequential chain (reduction_of).
  const Reduction red = reduction_of(c, Sum::y);
  const double g_red = gamma(product_sum_roundings(red, N) + 1, u);
  const double g2 = gamma(2, u);
  const TranscendentalBudget* sig = pr.has_z() ? &budget(c, "sigmoid") : nullptr;

  SequentialBounds out;
  out.y.assign(T * H * P, 0.0);
  out.state.assign(state_size, 0.0);
  out.stored_state.assign(state_size, 0.0);

  std::vector<double> St(P * N), Sabs(P * N), E(P * N);  // per (sequence, head) working set
  for (int64_t seq = 0; seq < S; ++seq) {
    for (int64_t h = 0; h < H; ++h) {
      const int64_t g = s.group_of(h);
      for (int64_t i = 0; i < P * N; ++i) {
        const int64_t si = pr.state_index(seq, h, 0, 0) + i;
        St[i] = !in.initial_state.empty() ? in.initial_state[si]
                : pr.has_initial_state() ? double(pr.initial_state[si]) : 0.0;
        Sabs[i] = std::fabs(St[i]);
        E[i] = in.initial_error.empty() ? 0.0 : in.initial_error[si];
      }
      for (int64_t t = s.cu_seqlens[seq]; t < s.cu_seqlens[seq + 1]; ++t) {
        const double delta = (*in.delta)[pr.dt_index(t, h)];
        const double a = (*in.decay)[pr.dt_index(t, h)];
        const StepErrors se = step_errors(pr, c, t, h, delta, a, u, eta);
        // |S| upper bound from the double recurrence St: its own error is below
        // 8·(steps+1)·2^-53·Sabs ([2.4]: a few double roundings per step, decaying).
        const double dbl_margin = 8.0 * double(t - s.cu_seqlens[seq] + 2) * 0x1p-53;
        for (int64_t p = 0; p < P; ++p) {
          const double x = pr.x[pr.x_index(t, h, p)];
          double sum_CE = 0, sum_CS = 0, y_dbl = 0;
          for (int64_t n = 0; n < N; ++n) {
            const int64_t i = p * N + n;
            const double Bn = pr.B[pr.bc_index(t, g, n)];
            const double Cn = pr.C[pr.bc_index(t, g, n)];
            const double prev_ub = std::fabs(St[i]) + dbl_margin * Sabs[i];  // ≥ |S_{t-1}|
            const double bx = delta * Bn * x;
            // [2.4] the update S = a·S + (δ·B)·x:
            //   (a + Δa)·E + Δa·|S| : the previous error carried, the decay's error;
            //   |B·x|·Δδ + γ2·|δBx| : δ's error and the two roundings of δ·B·x;
            //   γ2·(|âŜ| + |δ̂Bx|)  : the update's at most two roundings (FMA or not);
            //   |x|·η + 3η          : underflow of fl(δ·B) — up to η absolute when δ·B is
            //                         subnormal — then multiplied by x; and of the update's
            //                         rounded results.
            const double aS_mag = (a + se.d_decay) * (prev_ub + E[i]);
            const double bx_mag = std::fabs(bx) + std::fabs(Bn * x) * se.d_delta;
            double e = (a + se.d_decay) * E[i] + se.d_decay * prev_ub +
                       std::fabs(Bn * x) * se.d_delta + g2 * bx_mag + g2 * (aS_mag + bx_mag) +
                       std::fabs(x) * eta + 3 * eta;
            St[i] = a * St[i] + bx;
            Sabs[i] = a * Sabs[i] + std::fabs(bx);
            const double cur_ub = std::fabs(St[i]) + dbl_margin * Sabs[i];
            if (in.store_every_token && state_fmt != c.accumulation) {
              e += half_ulp_at_most(state_fmt, cur_ub + e);  // [2.6] store, felt by the next step
            }
            E[i] = e;
            y_dbl += Cn * St[i];
            sum_CE += std::fabs(Cn) * e;
            sum_CS += std::fabs(Cn) * (cur_ub + e);
          }
          // [2.5] y before the gate. With store_every_token the output is still computed from
          // the unrounded state of this token in SSU, but an external kernel may read back
          // the stored one; E already includes the store rounding in that case.
          const double Dx = double(pr.d_value(h, p)) * x;
          double y_pre_err = sum_CE + g_red * (sum_CS + std::fabs(Dx)) + u * std::fabs(Dx) + (N + 2) * eta;
          double y_mag = sum_CS + std::fabs(Dx);  // ≥ |ŷ_pre|, first order
          // |y| from the double recurrence, made an upper bound with its error margin.
          double y_abs = std::fabs(y_dbl + Dx) + dbl_margin * y_mag;
          if (sig != nullptr) {
            // [2.7] gate y·z·σ(z): |zσ| times the incoming error, plus two roundings and σ's budget.
            const double z = pr.z[pr.x_index(t, h, p)];
            const double sz = sigmoid(z);
            const double gz = std::fabs(z) * sz;
            const double sig_rel = transcendental_error(*sig, z, sz) / sz;
            // fl(z·σ(z)) may underflow (η absolute) and then multiplies y: η·(|y| + β) + η.
            y_pre_err = gz * y_pre_err + (g2 + sig_rel) * gz * (y_abs + y_pre_err) +
                        eta * (y_abs + y_pre_err) + eta;
            y_abs = gz * y_abs * (1 + 0x1p-50);  // double rounding of zσ(z)
          }
          // [2.8] rounding to the output format: half an ULP at |ŷ| ≤ |y| + error. With an
          // fp32 output this is the final fp32 rounding of the gate or of the sum.
          const double beta = y_pre_err + half_ulp_at_most(out_fmt, y_abs + y_pre_err);
          out.y[pr.x_index(t, h, p)] = beta * kSafetyFactor;
        }
      }
      for (int64_t i = 0; i < P * N; ++i) {
        const int64_t si = pr.state_index(seq, h, 0, 0) + i;
        const double ub = std::fabs(St[i]) + 8.0 * double(s.seq_len(seq) + 2) * 0x1p-53 * Sabs[i];
        out.state[si] = E[i] * kSafetyFactor;
        out.stored_state[si] =
            (state_fmt == c.accumulation || in.store_every_token)
                ? E[i] * kSafetyFactor
                : (E[i] + half_ulp_at_most(state_fmt, ub + E[i])) * kSafetyFactor;
      }
    }
  }
  return out;
}

}  // namespace ssmv::bound
