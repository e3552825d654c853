// Running error analysis of the Mamba-3 SISO decode step kernel, token by token; every term is
// derived in docs/mamba3-bounds.md (section numbers in brackets). The bound is not first order:
// products of errors are kept, so no safety factor stands for dropped terms. The bound's own
// double arithmetic is covered as in §9: magnitudes evaluated in double carry a relative margin
// kExactMargin, and every carried error and every y bound is multiplied by kStepSafety per token.
#include "verify/bound/mamba3/step_bound.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "verify/bound/error_model.h"
#include "verify/bound/mamba3/bound_terms.h"

namespace ssmv::bound::mamba3 {
namespace {

using ssmv::mamba3::Problem;
using ssmv::mamba3::StepContract;
using namespace terms;

// The carried state of one (sequence, head) pair: the kernel's errors in its stored four-part
// state and the exact magnitudes of the previous token's values.
struct Carried {
  std::vector<double> E_angle;  // [R] circular (or linear, see linear) error of the stored angle
  std::vector<double> angle_mag;  // [R] |θ̂| of the stored angle, at most
  std::vector<double> over;       // [R] how far the stored angle may lie outside [0, 2π]
  std::vector<double> rep;        // [R] the exact angle's representative the kernel's follows
  std::vector<double> rep_err;    // [R] |θ − rep| mod 2π
  std::vector<bool> initial;      // [R] rep is the initial angle itself (read exactly, linear)
  std::vector<double> E_S, S_mag;   // [P*N]
  std::vector<double> E_b, b_mag;   // [N]
  std::vector<double> E_x, x_mag;   // [P]
};

}  // namespace

StepBounds step_bounds(const Problem& pr, const StepContract& c, const ExactTrace& ex, const StartState* start) {
  ssmv::mamba3::validate(pr);
  const auto& sh = pr.shape;
  const int64_t T = sh.num_tokens(), S = sh.num_sequences(), H = sh.H, P = sh.P, N = sh.N, R = sh.R, N2 = N / 2;
  check_size("step_bounds", ex.angle, T * H * R, "angle");
  check_size("step_bounds", ex.angle_error, T * H * R, "angle_error");
  check_size("step_bounds", ex.S_abs, T * H * P * N, "S_abs");
  check_size("step_bounds", ex.y_abs, T * H * P, "y_abs");

  const double u = kU, eta = kEta;
  const double g2 = gamma(2, u), g4 = gamma(4, u), div = c.division_rel;
  const Format st = pr.formats.state, out = pr.formats.output, dotf = c.dot_operands;
  // [7.3] the dot's accumulation: an fp32 FMA chain in any order (each product term passes at
  // most N roundings: γ_N; every exact or rounded product may underflow: 2Nη), and, with tensor
  // cores, ⌈N/16⌉ truncating steps of at most 10.5u each (docs/bounds.md [3.1]).
  const int64_t steps = (N + 15) / 16;
  const double g_fma = gamma(N, u), abs_fma = 2.0 * double(N) * eta;
  const double g_tc = c.dot_tensor_cores ? 10.5 * double(steps) * u / (1 - 10.5 * double(steps) * u) : 0.0;
  const double abs_tc = c.dot_tensor_cores ? double(steps) * (2 * eta + 17 * 0x1p-158) : 0.0;
  const double g_dot = std::max(g_fma, g_tc), abs_dot = std::max(abs_fma, abs_tc);
  if (N > (int64_t(1) << 16)) throw std::invalid_argument("step_bounds: N above 2^16 (kStepSafety assumes fewer)");
  if (start != nullptr) {
    if (pr.has_initial_state()) throw std::invalid_argument("step_bounds: a start state and problem.initial both given");
    const int64_t S_ = sh.num_sequences();
    check_size("step_bounds", start->angle_error, S_ * H * R, "(start) angle_error");
    check_size("step_bounds", start->angle_abs, S_ * H * R, "(start) angle_abs");
    check_size("step_bounds", start->S_error, S_ * H * P * N, "(start) S_error");
    check_size("step_bounds", start->S_abs, S_ * H * P * N, "(start) S_abs");
    check_size("step_bounds", start->B_prev_error, S_ * H * N, "(start) B_prev_error");
    check_size("step_bounds", start->B_prev_abs, S_ * H * N, "(start) B_prev_abs");
    check_size("step_bounds", start->x_prev_error, S_ * H * P, "(start) x_prev_error");
    check_size("step_bounds", start->x_prev_abs, S_ * H * P, "(start) x_prev_abs");
  }
  if (dotf != Format::fp32 && dotf != Format::bf16 && dotf != Format::fp16) {
    throw std::invalid_argument("step_bounds: the dot's operands must be fp32, bf16 or fp16");
  }

  StepBounds res;
  res.y.assign(size_t(T * H * P), 0.0);
  res.angle.assign(size_t(S * H * R), 0.0);
  res.angle_abs.assign(size_t(S * H * R), 0.0);
  res.S.assign(size_t(S * H * P * N), 0.0);
  res.B_prev.assign(size_t(S * H * N), 0.0);
  res.x_prev.assign(size_t(S * H * P), 0.0);

  const auto zeros = [](int64_t n) { return std::vector<double>(size_t(n), 0.0); };
  std::vector<double> cosx = zeros(N2), sinx = zeros(N2), dcos = zeros(N2), dsin = zeros(N2), chord = zeros(N2);
  std::vector<double> chat = zeros(N2), shat = zeros(N2);
  std::vector<double> b_abs = zeros(N), db = zeros(N), c_abs = zeros(N), dc = zeros(N), dc_dot = zeros(N);
  std::vector<double> E_pre = zeros(P * N), E_dot = zeros(P * N);

  for (int64_t s = 0; s < S; ++s) {
    for (int64_t h = 0; h < H; ++h) {
      Carried k;
      k.E_angle.assign(size_t(R), 0.0);
      k.angle_mag.assign(size_t(R), 0.0);
      k.over.assign(size_t(R), 0.0);
      k.rep.assign(size_t(R), 0.0);
      k.rep_err.assign(size_t(R), 0.0);
      k.initial.assign(size_t(R), true);
      k.E_S.assign(size_t(P * N), 0.0);
      k.S_mag.assign(size_t(P * N), 0.0);
      k.E_b.assign(size_t(N), 0.0);
      k.b_mag.assign(size_t(N), 0.0);
      k.E_x.assign(size_t(P), 0.0);
      k.x_mag.assign(size_t(P), 0.0);
      if (start != nullptr) {  // [2] a previous kernel's state: its errors, the exact magnitudes
        for (int64_t r = 0; r < R; ++r) {
          const size_t i = size_t(pr.angle_state_index(s, h, r));
          k.E_angle[size_t(r)] = start->angle_error[i];
          k.initial[size_t(r)] = false;
          k.over[size_t(r)] = std::numeric_limits<double>::infinity();  // the general reduction at first
          k.angle_mag[size_t(r)] = start->angle_abs[i];
        }
        for (int64_t i = 0; i < P * N; ++i) {
          k.E_S[size_t(i)] = start->S_error[size_t(pr.state_index(s, h, 0, 0) + i)];
          k.S_mag[size_t(i)] = start->S_abs[size_t(pr.state_index(s, h, 0, 0) + i)];
        }
        for (int64_t n = 0; n < N; ++n) {
          k.E_b[size_t(n)] = start->B_prev_error[size_t(pr.b_prev_index(s, h, n))];
          k.b_mag[size_t(n)] = start->B_prev_abs[size_t(pr.b_prev_index(s, h, n))];
        }
        for (int64_t p = 0; p < P; ++p) {
          k.E_x[size_t(p)] = start->x_prev_error[size_t(pr.x_prev_index(s, h, p))];
          k.x_mag[size_t(p)] = start->x_prev_abs[size_t(pr.x_prev_index(s, h, p))];
        }
      } else if (pr.has_initial_state()) {  // [2] read exactly as the exact semantics starts: no error
        for (int64_t r = 0; r < R; ++r) {
          k.rep[size_t(r)] = pr.initial.angle[size_t(pr.angle_state_index(s, h, r))];
          k.angle_mag[size_t(r)] = std::fabs(k.rep[size_t(r)]);
        }
        for (int64_t i = 0; i < P * N; ++i) k.S_mag[size_t(i)] = std::fabs(pr.initial.S[size_t(pr.state_index(s, h, 0, 0) + i)]);
        for (int64_t n = 0; n < N; ++n) k.b_mag[size_t(n)] = std::fabs(pr.initial.B_prev[size_t(pr.b_prev_index(s, h, n))]);
        for (int64_t p = 0; p < P; ++p) k.x_mag[size_t(p)] = std::fabs(pr.initial.x_prev[size_t(pr.x_prev_index(s, h, p))]);
      }
      const int64_t g = sh.group_of(h);
      for (int64_t t = sh.cu_seqlens[size_t(s)]; t < sh.cu_seqlens[size_t(s + 1)]; ++t) {
        const double dt = pr.dt[size_t(pr.th_index(t, h))];
        const double trap = pr.trap[size_t(pr.th_index(t, h))];
        const double adt = pr.adt[size_t(pr.th_index(t, h))];
        if (!(dt >= 0)) throw std::invalid_argument("step_bounds: dt must be >= 0 (softplus already applied)");

        // [3] the gates: λ̂ = σ(trap), ô = fl(1 − λ̂), α̂, β̂ = fl(fl(α̂·dt)·ô), γ̂ = fl(λ̂·dt).
        const Gate gt = gate(c.sigmoid, trap);
        const double lam = gt.lam, om = gt.om, d_lam = gt.d_lam, d_om = gt.d_om;
        const double alpha = up(std::exp(adt));
        const double d_alpha = budget_at(c.exp, adt, alpha);
        const double ad = alpha * dt;
        const double d_ad = dt * d_alpha + u * dt * (alpha + d_alpha) + eta;
        const double beta = ad * om;
        const double d_beta = ad * d_om + om * d_ad + d_ad * d_om + u * (ad + d_ad) * (om + d_om) + eta;
        const double gam = lam * dt;
        const double d_gam = dt * d_lam + u * dt * (lam + d_lam) + eta;

        // [4] the angle, pairs r < R; pairs r >= R are exactly 0 (tanh(±0) = ±0, assumption A3).
        for (int64_t r = 0; r < N2; ++r) {
          if (r >= R) {
            cosx[size_t(r)] = 1;
            sinx[size_t(r)] = 0;
            chord[size_t(r)] = 0;
            dcos[size_t(r)] = budget_at(c.cos, 0, 1);
            dsin[size_t(r)] = budget_at(c.sin, 0, 0);
            continue;
          }
          const size_t ri = size_t(r);
          const double a = pr.angles[size_t(pr.angle_index(t, h, r))];
          const Increment v = angle_increment(c.tanh, a, dt);  // [4.1]
          const double m2 = v.value, d_m2 = v.error;
          // fl(m̂2 + θ̂_prev) [4.2]
          const double sum_mag = m2 + d_m2 + k.angle_mag[ri];
          const double th1 = sum_mag * (1 + u);
          const double E1 = k.E_angle[ri] + d_m2 + u * sum_mag;
          // [4.3] the reduction θ̂' − 2π_f·floor(θ̂'/2π_f). No wrap when the exact unreduced
          // angle lies, with every error, inside [0, 2π_f/(1 + div)) and the kernel's previous
          // angle follows the exact one's representative linearly.
          const double rep = k.rep[ri], rep_err = k.rep_err[ri];
          bool linear = k.initial[ri];
          if (!linear) {
            const double e = k.E_angle[ri] + rep_err;
            linear = k.over[ri] < rep - e && rep + e + k.over[ri] < 2 * kPi - 0x1p-40;
          }
          const double inc = kPi * std::tanh(a) * dt;
          const double psi = rep + inc;
          const double psi_err = rep_err + 0x1p-48 * (std::fabs(rep) + std::fabs(inc) + 1);
          double E2, mag2;
          if (linear && psi - psi_err - E1 >= 0 && (psi + psi_err + E1) * (1 + div) < kTwoPiF) {
            E2 = E1;  // k = 0: r̂ = θ̂' exactly
            // θ̂' lies within E1 of the exact ψ, so below psi + psi_err + E1 (< 2π_f): the
            // magnitude does not grow token after token while the angle does not wrap (th1 adds
            // every token's increment to the previous bound; cos and sin are budgeted on a range).
            mag2 = std::min(th1, (psi + psi_err + E1) * (1 + 0x1p-50));
            k.over[ri] = std::max(0.0, psi + psi_err + E1 - 2 * kPi);
          } else {
            const Reduced red = reduce(E1, th1, div);
            E2 = red.error;
            mag2 = red.magnitude;
            k.over[ri] = red.over;
          }
          k.E_angle[ri] = E2 * kStepSafety;
          k.angle_mag[ri] = mag2;
          k.initial[ri] = false;
          const double phi = ex.angle[size_t(pr.angle_index(t, h, r))];
          const double phi_err = ex.angle_error[size_t(pr.angle_index(t, h, r))];
          k.rep[ri] = phi;
          k.rep_err[ri] = phi_err;
          // [4.4] cos and sin of the computed angle.
          cosx[ri] = std::min(1.0, std::fabs(std::cos(phi)) + phi_err + 0x1p-50);
          sinx[ri] = std::min(1.0, std::fabs(std::sin(phi)) + phi_err + 0x1p-50);
          chord[ri] = std::min(k.E_angle[ri], 2.0);
          dcos[ri] = budget_over(c.cos, -mag2, mag2, std::min(1.0, cosx[ri] + k.E_angle[ri]));
          dsin[ri] = budget_over(c.sin, -mag2, mag2, std::min(1.0, sinx[ri] + k.E_angle[ri]));
        }
        for (int64_t r = 0; r < N2; ++r) {
          const size_t ri = size_t(r);
          chat[ri] = std::min(1 + dcos[ri], cosx[ri] + chord[ri] + dcos[ri]);
          shat[ri] = std::min(1 + dsin[ri], sinx[ri] + chord[ri] + dsin[ri]);
        }

        // [5] the turn of u = V + bias (V = B or C) by the computed angle, in fp32.
        const auto turn = [&](const std::vector<float>& V, const std::vector<float>& bias, std::vector<double>& mag,
                              std::vector<double>& err) {
          for (int64_t r = 0; r < N2; ++r) {
            const size_t ri = size_t(r);
            PairAngle a;
            a.turned = r < R;
            if (a.turned) {
              a.phi = ex.angle[size_t(pr.angle_index(t, h, r))];
              a.phi_err = ex.angle_error[size_t(pr.angle_index(t, h, r))];
            }
            a.chord = chord[ri];
            a.dcos = dcos[ri];
            a.dsin = dsin[ri];
            a.chat = chat[ri];
            a.shat = shat[ri];
            const double u0 = double(V[size_t(pr.bc_index(t, g, 2 * r))]) + bias[size_t(pr.bias_index(h, 2 * r))];
            const double u1 = double(V[size_t(pr.bc_index(t, g, 2 * r + 1))]) + bias[size_t(pr.bias_index(h, 2 * r + 1))];
            turn_pair(u0, u1, a, &mag[size_t(2 * r)], &err[size_t(2 * r)]);
          }
        };
        turn(pr.B, pr.B_bias, b_abs, db);
        turn(pr.C, pr.C_bias, c_abs, dc);
        for (int64_t n = 0; n < N; ++n) dc_dot[size_t(n)] = dc[size_t(n)] + round_to(dotf, c_abs[size_t(n)] + dc[size_t(n)]);

        // [6] the update Ŝ = fl(Ŝ_prev·α̂ + fl(fl(fl(β̂·x̂_prev)·b̂_prev) + fl(fl(γ̂·x)·b̂))).
        const double* S_abs = &ex.S_abs[size_t(((t * H + h) * P) * N)];
        for (int64_t p = 0; p < P; ++p) {
          const double xp = k.x_mag[size_t(p)], ex_p = k.E_x[size_t(p)];
          const double x = std::fabs(double(pr.x[size_t(pr.x_index(t, h, p))]));
          for (int64_t n = 0; n < N; ++n) {
            const size_t i = size_t(p * N + n);
            const double Sp = k.S_mag[i], ES = k.E_S[i];
            const double bp = k.b_mag[size_t(n)], eb = k.E_b[size_t(n)];
            const double bn = b_abs[size_t(n)], dbn = db[size_t(n)];
            const double dec = (Sp + ES) * (alpha + d_alpha);
            const double err_dec = Sp * d_alpha + ES * (alpha + d_alpha);
            const double P1 = (beta + d_beta) * (xp + ex_p) * (bp + eb);
            const double err1 = d_beta * (xp + ex_p) * (bp + eb) + beta * (ex_p * (bp + eb) + xp * eb);
            const double P2 = (gam + d_gam) * x * (bn + dbn);
            const double err2 = d_gam * x * (bn + dbn) + gam * x * dbn;
            const double under = 2 * eta * (3 + (bp + eb) + (bn + dbn));
            const double e = (err_dec + err1 + err2 + g2 * dec + g4 * (P1 + P2) + under) * kStepSafety;
            E_pre[i] = e;
            E_dot[i] = e + round_to(dotf, S_abs[i] + e);
          }
        }

        // [7] y = dot(bf16(Ŝ), bf16(ĉ)) + D·x, then ·silu(z), stored in the output format.
        for (int64_t p = 0; p < P; ++p) {
          double err_prod = 0, sum_abs = 0, y_dot = 0;
          for (int64_t n = 0; n < N; ++n) {
            const size_t i = size_t(p * N + n);
            const double cn = c_abs[size_t(n)], ec = dc_dot[size_t(n)];
            err_prod += cn * E_dot[i] + S_abs[i] * ec + ec * E_dot[i];
            sum_abs += (cn + ec) * (S_abs[i] + E_dot[i]);
            y_dot += cn * S_abs[i];
          }
          double e = err_prod + g_dot * sum_abs + abs_dot;
          const double x = double(pr.x[size_t(pr.x_index(t, h, p))]);
          double y_mag = y_dot;
          if (pr.has_D()) {  // fl(ŷ + fl(D·x)) (or one FMA)
            const double dx = std::fabs(double(pr.D[size_t(h)]) * x);
            e = e + u * dx + eta + u * (y_dot + e + dx + u * dx + eta);
            y_mag += dx;
          }
          if (pr.has_z()) e = gated_error(e, y_mag, pr.z[size_t(pr.x_index(t, h, p))], c.silu);  // [7.5]
          const double y_abs = ex.y_abs[size_t(pr.x_index(t, h, p))];
          res.y[size_t(pr.x_index(t, h, p))] = (e + round_to(out, y_abs + e)) * kStepSafety;
        }

        // [8] the stores of the four-part state in its formats; the magnitudes move on.
        for (int64_t i = 0; i < P * N; ++i) {
          k.E_S[size_t(i)] = (E_pre[size_t(i)] + round_to(st, S_abs[i] + E_pre[size_t(i)])) * kStepSafety;
          k.S_mag[size_t(i)] = S_abs[i];
        }
        for (int64_t n = 0; n < N; ++n) {
          k.E_b[size_t(n)] = (db[size_t(n)] + round_to(st, b_abs[size_t(n)] + db[size_t(n)])) * kStepSafety;
          k.b_mag[size_t(n)] = b_abs[size_t(n)];
        }
        for (int64_t p = 0; p < P; ++p) {
          const double x = pr.x[size_t(pr.x_index(t, h, p))];
          k.x_mag[size_t(p)] = std::fabs(x);
          k.E_x[size_t(p)] = std::fabs(round_value(st, x) - x);  // exactly the store's error
        }
      }
      for (int64_t r = 0; r < R; ++r) {
        res.angle[size_t(pr.angle_state_index(s, h, r))] = k.E_angle[size_t(r)];
        res.angle_abs[size_t(pr.angle_state_index(s, h, r))] = k.angle_mag[size_t(r)];
      }
      for (int64_t i = 0; i < P * N; ++i) res.S[size_t(pr.state_index(s, h, 0, 0) + i)] = k.E_S[size_t(i)];
      for (int64_t n = 0; n < N; ++n) res.B_prev[size_t(pr.b_prev_index(s, h, n))] = k.E_b[size_t(n)];
      for (int64_t p = 0; p < P; ++p) res.x_prev[size_t(pr.x_prev_index(s, h, p))] = k.E_x[size_t(p)];
    }
  }
  return res;
}

}  // namespace ssmv::bound::mamba3
