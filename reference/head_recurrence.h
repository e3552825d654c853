// The one core of the reference: the recurrence of docs/design.md section 2 for one
// (sequence, head) pair, one token at a time, at one precision, on a number policy of
// arithmetic.h. compute(), compute_streaming() and compute_decode() all run it (once
// per pair at the working precision; again at the check precision for a pair with a value
// its bound does not decide, reference/driver.cpp).
//
// Per token t (g = group of h):
//   δ = dt[t,h] (+ dt_bias[h]);  δ = log1p(exp(δ)) if softplus;  δ = clamp(δ, lo, hi)
//   a = exp(δ·A[h]);  u_n = δ·B[t,g,n]
//   S[p,n] = a·S[p,n] + u_n·x[t,h,p]
//   y_ungated[p] = Σ_n C[t,g,n]·S[p,n] + D·x[t,h,p];  y[p] = y_ungated[p]·(z / (1 + e^-z))
// Every operation is one MPFR rounding to nearest at the run's precision; the a-priori
// bound of mpfr_bound.h bounds what these roundings add up to.
//
// No allocation after construction: every variable is reused token after token. The
// state lives in one block (Arith::Array), each variable beside its limbs.
#pragma once

#include <mpfr.h>

#include <cmath>
#include <cstdint>
#include <memory>

#include "reference/arithmetic.h"
#include "spec/problem.h"

namespace ssmv::ref {

// Above this δ, exp(δ) would leave MPFR's default exponent range (|E| < 2^30, so e^δ
// overflows near δ = 7.4e8); softplus then uses the exact identity
// log1p(e^δ) = δ + log1p(e^-δ), which needs no large exponent.
inline constexpr double kSoftplusIdentityAbove = 0x1p20;

// The per-token scalars of one head: δ, the decay exp(δ·A) and (with z) the gates
// z·σ(z) of every dim, each one MPFR rounding per operation at the run's precision. The
// MPFR core (HeadRecurrence) and the tiered fast pass (tiered.cpp) both run this, so the
// fast pass sees bit for bit the check run's δ, decay and gates.
template <class Arith>
class TokenScalars {
 public:
  using Num = typename Arith::Num;

  TokenScalars(mpfr_prec_t prec, int64_t P) : P_(P), gate_(P, prec) {
    for (Num* v : {&delta_, &decay_, &x_, &t_, &one_}) Arith::init(*v, prec);
    Arith::set(one_, 1.0);
  }

  // δ and decay of packed token t, head h; the gates too when `gates` and z is given.
  void step(const Problem& pr, int64_t t, int64_t h, bool gates) {
    step_delta(pr, t, h);
    Arith::set(t_, double(pr.A[h]));
    Arith::mul(t_, delta_, t_);
    Arith::exp(decay_, t_);
    if (gates && pr.has_z()) {
      for (int64_t p = 0; p < P_; ++p) gate_of(pr.z[pr.x_index(t, h, p)], gate_[p]);
    }
  }

  // gate = z·σ(z) = z / (1 + e^-z) of one z, into r (at r's precision).
  void gate_of(float z, Num& r) {
    Arith::set(x_, double(z));
    Arith::neg(t_, x_);
    Arith::exp(t_, t_);
    Arith::add(t_, one_, t_);
    Arith::div(r, x_, t_);
  }

  const Num& delta_num() const { return delta_; }
  const Num& decay_num() const { return decay_; }
  const Num& gate_num(int64_t p) const { return gate_[p]; }
  mpfr_srcptr delta() const { return Arith::view(delta_); }
  mpfr_srcptr decay() const { return Arith::view(decay_); }
  mpfr_srcptr gate(int64_t p) const { return Arith::view(gate_[p]); }

 private:
  void step_delta(const Problem& pr, int64_t t, int64_t h) {
    Arith::set(delta_, double(pr.dt[pr.dt_index(t, h)]));
    if (pr.has_dt_bias()) {
      Arith::set(t_, double(pr.dt_bias[h]));
      Arith::add(delta_, delta_, t_);
    }
    if (pr.dt_softplus) {
      if (Arith::cmp(delta_, kSoftplusIdentityAbove) <= 0) {
        Arith::exp(t_, delta_);
        Arith::log1p(delta_, t_);
      } else {
        Arith::neg(t_, delta_);
        Arith::exp(t_, t_);
        Arith::log1p(t_, t_);
        Arith::add(delta_, delta_, t_);
      }
    }
    if (Arith::cmp(delta_, double(pr.dt_limit_lo)) < 0) Arith::set(delta_, double(pr.dt_limit_lo));
    if (Arith::cmp(delta_, double(pr.dt_limit_hi)) > 0) Arith::set(delta_, double(pr.dt_limit_hi));
  }

  int64_t P_;
  typename Arith::Array gate_;  // [P]
  Num delta_, decay_, x_, t_, one_;
};

template <class Arith>
class HeadRecurrence {
 public:
  using Num = typename Arith::Num;

  HeadRecurrence(mpfr_prec_t prec, int64_t P, int64_t N)
      : P_(P), N_(N), scalars_(prec, P), S_(P * N, prec), u_(N, prec), c_(N, prec), y_(P, prec),
        y_ungated_(P, prec) {
    for (Num* v : {&x_, &t_, &acc_}) Arith::init(*v, prec);
  }

  // Initial state S_0 [P, N]: zero, exact floats, or MPFR values (rounded to nearest).
  void load_zero() {
    for (int64_t i = 0; i < P_ * N_; ++i) Arith::zero(S_[i]);
  }
  void load(const float* h0) {
    for (int64_t i = 0; i < P_ * N_; ++i) Arith::set(S_[i], double(h0[i]));
  }
  void load(const mpfr_srcptr* h0) {
    for (int64_t i = 0; i < P_ * N_; ++i) Arith::set(S_[i], h0[i]);
  }

  // Advances by packed token t of head h. When sum_abs_cs is given ([P]), adds
  // |C_n·S_n| (each product rounded to the nearest double) into it, from 0. When
  // output_inexact is given ([P]), sets it to whether any operation of y_ungated[p] after
  // the state update (the products C_n·S_n, their sum, D·x and its addition) was inexact;
  // MPFR's inexact flag still accumulates over every operation, as without it.
  void step(const Problem& pr, int64_t t, int64_t h, double* sum_abs_cs, bool* output_inexact = nullptr) {
    scalars_.step(pr, t, h, true);
    const Num& delta = scalars_.delta_num();
    const Num& decay = scalars_.decay_num();
    const int64_t g = pr.shape.group_of(h);
    for (int64_t n = 0; n < N_; ++n) {
      Arith::set(t_, double(pr.B[pr.bc_index(t, g, n)]));
      Arith::mul(u_[n], delta, t_);
      Arith::set(c_[n], double(pr.C[pr.bc_index(t, g, n)]));
    }
    const bool has_d = pr.d_mode() != DMode::none;
    for (int64_t p = 0; p < P_; ++p) {
      Arith::set(x_, double(pr.x[pr.x_index(t, h, p)]));
      for (int64_t n = 0; n < N_; ++n) {
        Num& S = S_[p * N_ + n];
        Arith::mul(S, decay, S);
        Arith::mul(t_, u_[n], x_);
        Arith::add(S, S, t_);
      }
      const bool inexact_before = output_inexact && mpfr_inexflag_p();
      if (output_inexact) mpfr_clear_inexflag();
      Arith::zero(acc_);
      double abs_cs = 0;
      for (int64_t n = 0; n < N_; ++n) {
        Arith::mul(t_, c_[n], S_[p * N_ + n]);
        Arith::add(acc_, acc_, t_);
        if (sum_abs_cs) {
          // A conversion, not an operation of the recurrence: MPFR's flags are kept as
          // they were.
          const mpfr_flags_t flags = mpfr_flags_save();
          abs_cs += std::fabs(mpfr_get_d(Arith::view(t_), MPFR_RNDN));
          mpfr_flags_restore(flags, MPFR_FLAGS_ALL);
        }
      }
      if (sum_abs_cs) sum_abs_cs[p] = abs_cs;
      if (has_d) {
        Arith::set(t_, double(pr.d_value(h, p)));
        Arith::mul(t_, t_, x_);
        Arith::add(y_ungated_[p], acc_, t_);
      } else {
        Arith::set(y_ungated_[p], Arith::view(acc_));
      }
      if (output_inexact) {
        output_inexact[p] = mpfr_inexflag_p();
        if (inexact_before) mpfr_set_inexflag();
      }
      if (pr.has_z()) {
        Arith::mul(y_[p], y_ungated_[p], scalars_.gate_num(p));
      } else {
        Arith::set(y_[p], Arith::view(y_ungated_[p]));
      }
    }
  }

  mpfr_srcptr delta() const { return scalars_.delta(); }
  mpfr_srcptr decay() const { return scalars_.decay(); }
  mpfr_srcptr y(int64_t p) const { return Arith::view(y_[p]); }
  mpfr_srcptr y_ungated(int64_t p) const { return Arith::view(y_ungated_[p]); }
  mpfr_srcptr state(int64_t i) const { return Arith::view(S_[i]); }  // i = p·N + n
  // The gate z·σ(z) of dim p (only computed when z is given).
  mpfr_srcptr gate(int64_t p) const { return scalars_.gate(p); }

 private:
  int64_t P_, N_;
  TokenScalars<Arith> scalars_;
  typename Arith::Array S_;  // [P, N]
  typename Arith::Array u_;  // [N] δ·B_n
  typename Arith::Array c_;  // [N] C_n
  typename Arith::Array y_, y_ungated_;  // [P]
  Num x_, t_, acc_;
};

}  // namespace ssmv::ref
