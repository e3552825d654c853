// Running error analysis of the Mamba-3 SISO chunked prefill, chunk by chunk; every term is derived
// in docs/mamba3-bounds.md part II (section numbers [II.n] in brackets; [n] are part I's, shared
// with the step bound). As the step bound, it is not first order: products of errors are kept
// (the bf16 stores of θ, q and k are 2^-9 to 2^-7 relative, and their products matter), and the
// bound's own double arithmetic is covered by kExactMargin on evaluated magnitudes and kStepSafety
// per chunk on every carried error and every y bound (§9; no path within a chunk has 2^20
// operations: N, P and the chunk size are at most 2^14, checked below).
#include "verify/bound/mamba3/prefill_bound.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "verify/bound/error_model.h"
#include "verify/bound/mamba3/bound_terms.h"

namespace ssmv::bound::mamba3 {
namespace {

using ssmv::mamba3::kLog2eF32;
using ssmv::mamba3::PrefillContract;
using ssmv::mamba3::Problem;
using namespace terms;

constexpr double kLn2 = 0.6931471805599453;
constexpr double kLog2e = 1.4426950408889634;  // within 2^-53 relative of log2 e

// [II.0] fl(â·b̂) against a·b: a, b upper bounds of the exact magnitudes, da, db the errors of â, b̂.
double mul_error(double a, double da, double b, double db) {
  return a * db + b * da + da * db + kU * (a + da) * (b + db) + kEta;
}

// [II.0] A sum of `terms` products (exact or rounded once in fp32) added onto an accumulator
// when `onto_acc`: an fp32 FMA chain or adds in any order (each term passes at most terms + 2
// roundings: γ), or, with tensor cores, ⌈terms/width⌉ steps (one more for the accumulator) of
// the truncating w16_a26_rz model, 10.5u each (docs/bounds.md [3.1]); the larger of the two.
// `rel` multiplies the sum of the terms' and the accumulator's magnitudes, `abs` is the floor.
struct Accumulation {
  double rel = 0, abs = 0;
};
Accumulation accumulation(int64_t terms, bool onto_acc, bool tensor_cores, int64_t width = 16) {
  Accumulation a{gamma(terms + 2, kU), (2.0 * double(terms) + 2) * kEta};
  if (tensor_cores) {
    const double steps = double((terms + width - 1) / width + (onto_acc ? 1 : 0));
    a.rel = std::max(a.rel, 10.5 * steps * kU / (1 - 10.5 * steps * kU));
    a.abs = std::max(a.abs, steps * (2 * kEta + 17 * 0x1p-158));
  }
  return a;
}

// [II.4] 2^x through the contract's exp2 at an fp32 argument within dx of the exact x: an upper
// bound of 2^x and the error. `nonpositive`: the kernel's argument is <= 0 (a sum of values <= 0,
// or clamped by min(·, 0)).
struct Pow2 {
  double value = 0, error = 0;
};
Pow2 pow2(const TranscendentalBudget& b, double x, double dx, bool nonpositive) {
  const double v = std::exp2(x) * (1 + kExactMargin);
  const double hi = nonpositive ? std::min(x + dx, 0.0) : x + dx;
  const double moved = v * std::expm1(dx * kLn2) * (1 + kExactMargin);  // |2^x̂ − 2^x| <= 2^x(2^dx − 1)
  return {v, moved + budget_over(b, x - dx, hi, std::min(v * std::exp2(dx), 1.0) * (1 + kExactMargin))};
}

// [II.1] |θ̂| of a reduced angle whose exact value is phi (reduced, within pe): phi + its errors
// when that leaves no doubt which representative the kernel's value is (phi farther than the
// errors and the overshoot from 0 and 2π; 2^-20 covers |2π_f − 2π|), else the reduction's bound.
double reduced_magnitude(const Reduced& r, double phi, double pe) {
  const double e = r.error + pe + 0x1p-40, slack = r.over + 0x1p-20;
  if (phi - e > slack && phi + e + slack < 2 * kPi) return std::min(r.magnitude, phi + e);
  return r.magnitude;
}

// Σ_n a[i·N + n]·b[j·N + n] for rows i of a and j of b (row-major, N wide): the bound's dots.
double row_dot(const std::vector<double>& a, int64_t i, const std::vector<double>& b, int64_t j, int64_t N) {
  const double* x = &a[size_t(i * N)];
  const double* y = &b[size_t(j * N)];
  double s = 0;
  for (int64_t n = 0; n < N; ++n) s += x[n] * y[n];
  return s;
}

}  // namespace

StepBounds prefill_bounds(const Problem& pr, int64_t L, const PrefillContract& c, const ExactTrace& ex) {
  ssmv::mamba3::validate(pr);
  const auto& sh = pr.shape;
  const int64_t T = sh.num_tokens(), S = sh.num_sequences(), H = sh.H, P = sh.P, N = sh.N, R = sh.R, N2 = N / 2;
  if (L < 1) throw std::invalid_argument("prefill_bounds: chunk_size must be >= 1, got " + std::to_string(L));
  if (N > (int64_t(1) << 14) || P > (int64_t(1) << 14) || L > (int64_t(1) << 14)) {
    throw std::invalid_argument("prefill_bounds: N, P and chunk_size must be at most 2^14 (kStepSafety assumes it)");
  }
  check_size("prefill_bounds", ex.angle, T * H * R, "angle");
  check_size("prefill_bounds", ex.angle_error, T * H * R, "angle_error");
  check_size("prefill_bounds", ex.S_abs, chunk_ends(sh, L) * H * P * N, "S_abs");
  check_size("prefill_bounds", ex.y_abs, T * H * P, "y_abs");
  for (size_t i = 0; i < pr.adt.size(); ++i) {
    if (!(pr.adt[i] <= 0)) {
      throw std::invalid_argument("prefill_bounds: adt = " + std::to_string(pr.adt[i]) +
                                  " > 0: the chunked kernel's decays exp2(min(·, 0)) compute another function");
    }
    if (!(pr.dt[i] >= 0)) throw std::invalid_argument("prefill_bounds: dt must be >= 0 (softplus already applied)");
  }
  const double u = kU, eta = kEta, div = c.division_rel;
  const double log2e_f = double(kLog2eF32);
  const double log2e_err = std::fabs(log2e_f - kLog2e) + 0x1p-52;
  const Format st = pr.formats.state, out = pr.formats.output, qks = c.qk_store, dotf = c.dot_operands;
  const bool tc = c.dot_tensor_cores;
  // [II.3] the diagonal Σ_n fl(q_n·k_n): an fp32 chain of N rounded products, or a tf32 mma fed
  // the fp32 products unconverted (the H200's PTX: no cvt.rna.tf32), which reads 10 of their 23
  // significand bits — truncation, below 2^-10 relative — and sums in steps of 8 (taken at the
  // w16_a26_rz model's 10.5u per step, A8).
  Accumulation qk_acc = accumulation(N, false, false);
  if (c.qk_dot_tf32) {
    const Accumulation t = accumulation(N, false, true, 8);
    qk_acc.rel = std::max(qk_acc.rel, 0x1p-10 + t.rel * (1 + 0x1p-10));
    qk_acc.abs = std::max(qk_acc.abs, t.abs);  // tf32 keeps fp32's exponent range and subnormals' floor
  }
  const Accumulation dotN = accumulation(N, false, tc);

  StepBounds res;
  res.y.assign(size_t(T * H * P), 0.0);
  res.angle.assign(size_t(S * H * R), 0.0);
  res.angle_abs.assign(size_t(S * H * R), 0.0);
  res.S.assign(size_t(S * H * P * N), 0.0);
  res.B_prev.assign(size_t(S * H * N), 0.0);
  res.x_prev.assign(size_t(S * H * P), 0.0);

  // Per chunk, row i of a token: turned c and scaled k magnitudes and errors [L, N], the x
  // magnitudes [L, P], and per pair of tokens the causal weight's bound [L, L].
  std::vector<double> c_abs(size_t(L * N)), dq(size_t(L * N)), cq(size_t(L * N));
  std::vector<double> b_abs(size_t(L * N)), k_abs(size_t(L * N)), dk(size_t(L * N)), kk(size_t(L * N));
  std::vector<double> b_last(size_t(N), 0.0), db_last(size_t(N), 0.0);
  std::vector<double> x_abs(size_t(L * P)), s_abs(size_t(L * L)), s_err(size_t(L * L));
  std::vector<double> Sm(size_t(P * N)), ES(size_t(P * N)), ESd(size_t(P * N));
  std::vector<double> vs_abs(size_t(L * P)), dvs(size_t(L * P));
  std::vector<double> cs(size_t(L), 0.0), dcs(size_t(L), 0.0), qkg(size_t(L), 0.0), dqkg(size_t(L), 0.0);
  std::vector<double> st_err(size_t(R), 0.0), st_mag(size_t(R), 0.0);
  std::vector<PairAngle> angles(size_t(L * N2));
  std::vector<Gate> gates(size_t(L + 1));

  for (int64_t s = 0; s < S; ++s) {
    const int64_t t_begin = sh.cu_seqlens[size_t(s)], t_end = sh.cu_seqlens[size_t(s + 1)];
    const int64_t chunks = chunks_of_sequence(sh, s, L), end0 = first_chunk_end(sh, s, L);
    for (int64_t h = 0; h < H; ++h) {
      const int64_t g = sh.group_of(h);
      const double Dh = pr.has_D() ? std::fabs(double(pr.D[size_t(h)])) : 0.0;
      // [II.1] the running angle state (fp32, in registers): circular error and magnitude.
      for (int64_t r = 0; r < R; ++r) {
        st_err[size_t(r)] = 0;  // the initial angle is read exactly
        st_mag[size_t(r)] = pr.has_initial_state() ? std::fabs(pr.initial.angle[size_t(pr.angle_state_index(s, h, r))]) : 0;
      }
      // [II.8] the state entering the first chunk: S0 + ((x_prev·b_prev)·dt_0)·(1 − λ̂_0), or 0.
      std::fill(Sm.begin(), Sm.end(), 0.0);
      std::fill(ES.begin(), ES.end(), 0.0);
      if (pr.has_initial_state()) {
        const double dt0 = pr.dt[size_t(pr.th_index(t_begin, h))];
        const Gate g0 = gate(c.sigmoid, pr.trap[size_t(pr.th_index(t_begin, h))]);
        for (int64_t p = 0; p < P; ++p) {
          const double xp = std::fabs(double(pr.initial.x_prev[size_t(pr.x_prev_index(s, h, p))]));
          for (int64_t n = 0; n < N; ++n) {
            const double bp = std::fabs(double(pr.initial.B_prev[size_t(pr.b_prev_index(s, h, n))]));
            const double S0 = std::fabs(double(pr.initial.S[size_t(pr.state_index(s, h, p, n))]));
            const double p1 = xp * bp, e1 = u * p1 + eta;
            const double e2 = mul_error(p1, e1, dt0, 0);
            const double e3 = mul_error(p1 * dt0, e2, g0.om, g0.d_om);
            const double p3 = p1 * dt0 * g0.om;
            Sm[size_t(p * N + n)] = S0 + p3;
            ES[size_t(p * N + n)] = (e3 + u * (S0 + p3 + e3)) * kStepSafety;
          }
        }
      }

      for (int64_t k = 0; k < chunks; ++k) {
        const int64_t tc0 = t_begin + k * L, nc = std::min(L, t_end - tc0);
        // [II.2] gates of the chunk's tokens and of the token after it (the shifted γ).
        for (int64_t i = 0; i <= nc && tc0 + i < t_end; ++i) {
          gates[size_t(i)] = gate(c.sigmoid, pr.trap[size_t(pr.th_index(tc0 + i, h))]);
        }
        // [II.1] the cumulative angle of each token and the running state at the chunk's end.
        for (int64_t r = 0; r < N2; ++r) {
          if (r >= R) {  // angles r >= R load as 0: cos(0), sin(0) within their budgets
            for (int64_t i = 0; i < nc; ++i) {
              PairAngle& a = angles[size_t(i * N2 + r)];
              a = PairAngle{};
              a.dcos = budget_at(c.cos, 0, 1);
              a.dsin = budget_at(c.sin, 0, 0);
              a.chat = 1 + a.dcos;
              a.shat = a.dsin;
            }
            continue;
          }
          double sum_abs = 0, sum_err = 0;
          for (int64_t i = 0; i < nc; ++i) {
            const int64_t t = tc0 + i;
            const double dt = pr.dt[size_t(pr.th_index(t, h))];
            const Increment v = angle_increment(c.tanh, pr.angles[size_t(pr.angle_index(t, h, r))], dt);
            sum_abs += v.value + v.error;
            sum_err += v.error;
            // the prefix sum of i + 1 values in any order (γ_i), then fl(prefix + state)
            const double prefix = sum_abs * (1 + gamma(i, u));
            const double o_mag = (st_mag[size_t(r)] + prefix) * (1 + u);
            const double E1 = st_err[size_t(r)] + sum_err + gamma(i, u) * sum_abs + u * (st_mag[size_t(r)] + prefix);
            const Reduced red = reduce(E1, o_mag, div);
            const double phi = ex.angle[size_t(pr.angle_index(t, h, r))];
            const double pe = ex.angle_error[size_t(pr.angle_index(t, h, r))];
            const double mag = reduced_magnitude(red, phi, pe);
            const double stored = red.error + round_to(c.angle_store, mag);  // θ stored [II.1]
            const double arg = mag + stored - red.error;                     // |θ̂| as cos, sin read it
            PairAngle& pa = angles[size_t(i * N2 + r)];
            pa.turned = true;
            pa.phi = phi;
            pa.phi_err = pe;
            pa.chord = std::min(stored, 2.0);
            const double cosx = std::min(1.0, std::fabs(std::cos(phi)) + pe + 0x1p-50);
            const double sinx = std::min(1.0, std::fabs(std::sin(phi)) + pe + 0x1p-50);
            pa.dcos = budget_over(c.cos, -arg, arg, std::min(1.0, cosx + stored));
            pa.dsin = budget_over(c.sin, -arg, arg, std::min(1.0, sinx + stored));
            pa.chat = std::min(1 + pa.dcos, cosx + pa.chord + pa.dcos);
            pa.shat = std::min(1 + pa.dsin, sinx + pa.chord + pa.dsin);
          }
          // the state: fl(state + tl.sum of the chunk's values), reduced; stays fp32
          const double total = sum_abs * (1 + gamma(nc - 1, u));
          const double o_mag = (st_mag[size_t(r)] + total) * (1 + u);
          const double E1 = st_err[size_t(r)] + sum_err + gamma(nc - 1, u) * sum_abs + u * (st_mag[size_t(r)] + total);
          const Reduced red = reduce(E1, o_mag, div);
          const int64_t t_last = tc0 + nc - 1;
          st_err[size_t(r)] = red.error * kStepSafety;
          st_mag[size_t(r)] = reduced_magnitude(red, ex.angle[size_t(pr.angle_index(t_last, h, r))],
                                                ex.angle_error[size_t(pr.angle_index(t_last, h, r))]);
        }

        // [II.3] per token: the turned c and b (fp32), the stored q̂ = Q(c), k̂ = Q(fl(b·scale)),
        // and the diagonal fl(fl(Σ_n fl(u_q·u_k))·γ̂).
        for (int64_t i = 0; i < nc; ++i) {
          const int64_t t = tc0 + i;
          const double dt = pr.dt[size_t(pr.th_index(t, h))];
          const Gate& gi = gates[size_t(i)];
          const double gam = gi.lam * dt, d_gam = dt * gi.d_lam + u * dt * (gi.lam + gi.d_lam) + eta;
          double sg = 0, d_sg = 0;  // fl(dt_{t+1}·fl(1 − λ̂_{t+1})); 0 after the sequence's last token
          if (t + 1 < t_end) {
            const double dt1 = pr.dt[size_t(pr.th_index(t + 1, h))];
            const Gate& g1 = gates[size_t(i + 1)];
            sg = g1.om * dt1;
            d_sg = dt1 * g1.d_om + u * dt1 * (g1.om + g1.d_om) + eta;
          }
          const double scale = sg + gam, d_scale = d_sg + d_gam + u * (sg + d_sg + gam + d_gam);
          double qk_abs = 0, qk_err = 0;
          for (int64_t r = 0; r < N2; ++r) {
            const PairAngle& pa = angles[size_t(i * N2 + r)];
            const int64_t n0 = 2 * r, n1 = 2 * r + 1;
            const double uq0 = double(pr.C[size_t(pr.bc_index(t, g, n0))]) + pr.C_bias[size_t(pr.bias_index(h, n0))];
            const double uq1 = double(pr.C[size_t(pr.bc_index(t, g, n1))]) + pr.C_bias[size_t(pr.bias_index(h, n1))];
            const double uk0 = double(pr.B[size_t(pr.bc_index(t, g, n0))]) + pr.B_bias[size_t(pr.bias_index(h, n0))];
            const double uk1 = double(pr.B[size_t(pr.bc_index(t, g, n1))]) + pr.B_bias[size_t(pr.bias_index(h, n1))];
            double cm[2], ce[2], bm[2], be[2];
            turn_pair(uq0, uq1, pa, cm, ce);
            turn_pair(uk0, uk1, pa, bm, be);
            for (int q = 0; q < 2; ++q) {
              const size_t e = size_t(i * N + n0 + q);
              c_abs[e] = cm[q];
              dq[e] = ce[q] + round_to(qks, cm[q] + ce[q]);
              b_abs[e] = bm[q];
              k_abs[e] = bm[q] * scale;
              const double dkp = mul_error(bm[q], be[q], scale, d_scale);
              dk[e] = dkp + round_to(qks, k_abs[e] + dkp);
              if (t == t_end - 1) {
                b_last[size_t(n0 + q)] = bm[q];
                db_last[size_t(n0 + q)] = be[q];
              }
            }
            for (const auto& [a, b] : {std::pair{uq0, uk0}, std::pair{uq1, uk1}}) {
              const double aq = up(a), ak = up(b), daq = u * aq, dak = u * ak;
              qk_abs += aq * ak;
              qk_err += mul_error(aq, daq, ak, dak);  // fl(û_q·û_k)
            }
          }
          const double qk_hat = qk_abs + qk_err;
          qk_err += qk_acc.rel * qk_hat + qk_acc.abs;
          qkg[size_t(i)] = qk_abs * gam;
          dqkg[size_t(i)] = mul_error(qk_abs, qk_err, gam, d_gam);
          for (int64_t p = 0; p < P; ++p) x_abs[size_t(i * P + p)] = std::fabs(double(pr.x[size_t(pr.x_index(t, h, p))]));
        }

        // [II.4] log-decays: d̂a = fl(adt·log2e_f), cs = cumsum (any order), last = sum (any order).
        double w_sum = 0, da_abs = 0, da_err = 0;
        for (int64_t i = 0; i < nc; ++i) {
          const double adt = std::fabs(double(pr.adt[size_t(pr.th_index(tc0 + i, h))]));
          w_sum += adt * kLog2e;
          da_err += adt * log2e_err + u * adt * log2e_f + eta;
          da_abs += adt * log2e_f * (1 + u);
          cs[size_t(i)] = -w_sum;  // Λ_i (exact up to the double margin added to the errors)
          dcs[size_t(i)] = da_err + gamma(i, u) * da_abs + 0x1p-48 * w_sum;
        }
        const double last = -w_sum, d_last = da_err + gamma(nc - 1, u) * da_abs + 0x1p-48 * w_sum;

        // [II.5] inter-chunk term: q̂·Q(Ŝ)ᵀ over N, then ·exp2(cs_i).
        for (size_t e = 0; e < ESd.size(); ++e) ESd[e] = ES[e] + round_to(dotf, Sm[e] + ES[e]);
        for (size_t e = 0; e < cq.size(); ++e) cq[e] = c_abs[e] + dq[e];
        for (size_t e = 0; e < kk.size(); ++e) kk[e] = k_abs[e] + dk[e];
        // [II.6] the causal weights s_ij, j < i: q̂_i·k̂_j over N, ·exp2(min(cs_i − cs_j, 0)), stored Q.
        for (int64_t i = 0; i < nc; ++i) {
          for (int64_t j = 0; j < i; ++j) {
            const double X = row_dot(c_abs, i, k_abs, j, N);
            const double d_dot = row_dot(c_abs, i, dk, j, N) + row_dot(dq, i, kk, j, N) +
                                 dotN.rel * row_dot(cq, i, kk, j, N) + dotN.abs;
            const double x = cs[size_t(i)] - cs[size_t(j)];
            const double dx = dcs[size_t(i)] + dcs[size_t(j)] + u * (std::fabs(x) + dcs[size_t(i)] + dcs[size_t(j)]);
            const Pow2 w = pow2(c.exp2, x, dx, true);
            const double e = mul_error(X, d_dot, w.value, w.error);
            s_abs[size_t(i * L + j)] = X * w.value;
            s_err[size_t(i * L + j)] = e + round_to(dotf, X * w.value + e);
          }
        }
        const Accumulation pv = accumulation(nc, true, tc);
        for (int64_t i = 0; i < nc; ++i) {
          const int64_t t = tc0 + i;
          const Pow2 E = pow2(c.exp2, cs[size_t(i)], dcs[size_t(i)], true);
          for (int64_t p = 0; p < P; ++p) {
            // inter: Σ_n ĉ·Q(Ŝ) against c·S_in, then the scale
            double o_abs = 0, o_err = 0, o_hat = 0;
            for (int64_t n = 0; n < N; ++n) {
              const size_t e = size_t(p * N + n), q = size_t(i * N + n);
              o_abs += c_abs[q] * Sm[e];
              o_err += c_abs[q] * ESd[e] + dq[q] * (Sm[e] + ESd[e]);
              o_hat += cq[q] * (Sm[e] + ESd[e]);
            }
            o_err += dotN.rel * o_hat + dotN.abs;
            const double o1_err = mul_error(o_abs, o_err, E.value, E.error), o1_abs = o_abs * E.value;
            // intra: Σ_{j<i} Q(ŝ_ij)·x_j onto the accumulator
            double pv_abs = 0, pv_err = 0;
            for (int64_t j = 0; j < i; ++j) {
              const double xa = x_abs[size_t(j * P + p)];
              pv_abs += (s_abs[size_t(i * L + j)] + s_err[size_t(i * L + j)]) * xa;
              pv_err += s_err[size_t(i * L + j)] * xa;
            }
            double e = o1_err + pv_err + pv.rel * (o1_abs + o1_err + pv_abs) + pv.abs;
            // [II.7] the diagonal and D: fl(acc + fl(fl(D + q̂k̂γ̂)·x))
            const double xa = x_abs[size_t(i * P + p)];
            const double dg = dqkg[size_t(i)] + u * (Dh + qkg[size_t(i)] + dqkg[size_t(i)]);
            const double diag = (Dh + qkg[size_t(i)]) * xa, d_diag = mul_error(Dh + qkg[size_t(i)], dg, xa, 0);
            double y_mag = o1_abs + pv_abs + diag;
            e += d_diag + u * (y_mag + e + d_diag);
            if (pr.has_z()) e = gated_error(e, y_mag, pr.z[size_t(pr.x_index(t, h, p))], c.silu);  // [7.5]
            const double y_abs = ex.y_abs[size_t(pr.x_index(t, h, p))];
            res.y[size_t(pr.x_index(t, h, p))] = (e + round_to(out, y_abs + e)) * kStepSafety;
          }
        }

        // [II.8] the state update: fl(Ŝ·exp2(last)) + Σ_j Q(fl(x_j·exp2(last − cs_j)))·k̂_j.
        const Pow2 El = pow2(c.exp2, last, d_last, true);
        for (int64_t j = 0; j < nc; ++j) {
          const double rho = last - cs[size_t(j)];  // exact Σ_{r>j} w_r <= 0 (to the double margin)
          const double d_rev = d_last + dcs[size_t(j)] + u * (std::fabs(rho) + d_last + dcs[size_t(j)]);
          const Pow2 Rv = pow2(c.exp2, std::min(rho, 0.0), d_rev, false);
          for (int64_t p = 0; p < P; ++p) {
            const double xa = x_abs[size_t(j * P + p)];
            const double e = xa * Rv.error + u * xa * (Rv.value + Rv.error) + eta;
            vs_abs[size_t(j * P + p)] = xa * Rv.value;
            dvs[size_t(j * P + p)] = e + round_to(dotf, xa * Rv.value + e);
          }
        }
        const Accumulation upd = accumulation(nc, true, tc);
        const int64_t t_last = tc0 + nc - 1;
        const double* S_end = &ex.S_abs[size_t(((end0 + k) * H + h) * P * N)];
        // the kernel's state after the chunk also holds the last token's shifted trapezoid term
        double shifted = 0;
        if (t_last + 1 < t_end) shifted = gates[size_t(nc)].om * pr.dt[size_t(pr.th_index(t_last + 1, h))] * (1 + kExactMargin);
        for (int64_t p = 0; p < P; ++p) {
          for (int64_t n = 0; n < N; ++n) {
            const size_t e = size_t(p * N + n);
            double u_abs = 0, u_err = 0;
            for (int64_t j = 0; j < nc; ++j) {
              const size_t jp = size_t(j * P + p), jn = size_t(j * N + n);
              u_abs += (vs_abs[jp] + dvs[jp]) * kk[jn];
              u_err += dvs[jp] * kk[jn] + vs_abs[jp] * dk[jn];
            }
            const double dec_err = mul_error(Sm[e], ES[e], El.value, El.error), dec_abs = Sm[e] * El.value;
            ES[e] = (dec_err + u_err + upd.rel * (dec_abs + dec_err + u_abs) + upd.abs) * kStepSafety;
            // |S_in| of the next chunk: the exact state after the chunk's last token t plus the
            // shifted trapezoid term (1 − λ_{t+1})·dt_{t+1}·x_t ⊗ b_t the kernel's state holds already
            Sm[e] = S_end[e] + shifted * x_abs[size_t((nc - 1) * P + p)] * b_abs[size_t((nc - 1) * N + n)];
          }
        }
      }
      // [II.9] the returned four-part state.
      for (int64_t r = 0; r < R; ++r) {
        const double store = round_to(c.angle_store, st_mag[size_t(r)]);
        res.angle[size_t(pr.angle_state_index(s, h, r))] = st_err[size_t(r)] + store;
        res.angle_abs[size_t(pr.angle_state_index(s, h, r))] = st_mag[size_t(r)] + store;
      }
      for (int64_t i = 0; i < P * N; ++i) {
        res.S[size_t(pr.state_index(s, h, 0, 0) + i)] = ES[size_t(i)] + round_to(st, Sm[size_t(i)] + ES[size_t(i)]);
      }
      for (int64_t n = 0; n < N; ++n) {
        res.B_prev[size_t(pr.b_prev_index(s, h, n))] = db_last[size_t(n)] + round_to(st, b_last[size_t(n)] + db_last[size_t(n)]);
      }
      for (int64_t p = 0; p < P; ++p) {
        const double x = pr.x[size_t(pr.x_index(t_end - 1, h, p))];
        res.x_prev[size_t(pr.x_prev_index(s, h, p))] = std::fabs(round_value(st, x) - x);  // the store's error exactly
      }
    }
  }
  return res;
}

}  // namespace ssmv::bound::mamba3
