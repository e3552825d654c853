#include "reference/mamba3/pair_run.h"

#include <cmath>
#include <utility>

namespace ssmv::ref::mamba3 {

PairRun::PairRun(const ssmv::mamba3::Shape& shape, mpfr_prec_t bits, bool magnitudes)
    : P_(shape.P),
      N_(shape.N),
      R_(shape.R),
      bits_(bits),
      magnitudes_(magnitudes),
      cos_(mpfr_zeros(size_t(R_), bits)),
      sin_(mpfr_zeros(size_t(R_), bits)),
      cos_mag_(mpfr_zeros(size_t(R_), kMagnitudeBits)),
      sin_mag_(mpfr_zeros(size_t(R_), kMagnitudeBits)),
      u_(mpfr_zeros(size_t(N_), bits)),
      u_mag_(mpfr_zeros(size_t(N_), kMagnitudeBits)),
      b_(mpfr_zeros(size_t(N_), bits)),
      c_(mpfr_zeros(size_t(N_), bits)),
      b_mag_(mpfr_zeros(size_t(N_), kMagnitudeBits)),
      c_mag_(mpfr_zeros(size_t(N_), kMagnitudeBits)),
      beta_x_prev_(mpfr_zeros(size_t(P_), bits)),
      gamma_x_(mpfr_zeros(size_t(P_), bits)),
      beta_x_prev_mag_(mpfr_zeros(size_t(P_), kMagnitudeBits)),
      gamma_x_mag_(mpfr_zeros(size_t(P_), kMagnitudeBits)),
      y_(mpfr_zeros(size_t(P_), bits)),
      y_mag_(mpfr_zeros(size_t(P_), kMagnitudeBits)) {
  for (Num* v : {&lambda_, &one_minus_lambda_, &alpha_, &beta_, &gamma_, &pi_, &two_pi_, &t0_, &t1_}) v->init(bits);
  for (Num* v : {&alpha_mag_, &m0_, &m1_}) v->init(kMagnitudeBits);
  mpfr_const_pi(pi_.get(), MPFR_RNDN);
  mpfr_mul_2ui(two_pi_.get(), pi_.get(), 1, MPFR_RNDN);  // exact
}

void PairRun::start(const Problem& pr, int64_t s, int64_t h, PairState& st) const {
  const auto set = [](Num& v, Num& mag, float x) {
    mpfr_set_flt(v.get(), x, MPFR_RNDN);                     // exact: precision >= 24
    mpfr_set_d(mag.get(), std::fabs(double(x)), MPFR_RNDU);  // exact: 53 bits
  };
  const bool given = pr.has_initial_state();
  const ssmv::mamba3::FourPartState& in = pr.initial;
  for (int64_t r = 0; r < R_; ++r)
    set(st.angle[r], st.angle_mag[r], given ? in.angle[pr.angle_state_index(s, h, r)] : 0.0f);
  for (int64_t p = 0; p < P_; ++p) {
    for (int64_t n = 0; n < N_; ++n) {
      set(st.S[p * N_ + n], st.S_mag[p * N_ + n], given ? in.S[pr.state_index(s, h, p, n)] : 0.0f);
    }
    mpfr_set_flt(st.x_prev[p].get(), given ? in.x_prev[pr.x_prev_index(s, h, p)] : 0.0f, MPFR_RNDN);
  }
  for (int64_t n = 0; n < N_; ++n) {
    set(st.b_prev[n], st.b_prev_mag[n], given ? in.B_prev[pr.b_prev_index(s, h, n)] : 0.0f);
  }
}

// λ = σ(trap) = 1/(1 + e^-trap); 1 − λ = σ(−trap) = 1/(1 + e^trap), formed on its own so that
// it keeps its relative accuracy where λ is near 1; α = e^adt; γ = λ·dt; β = (1 − λ)·dt·α.
void PairRun::gates(const Problem& pr, int64_t t, int64_t h) {
  const size_t i = size_t(pr.th_index(t, h));
  const double trap = pr.trap[i], dt = pr.dt[i];
  mpfr_set_d(t0_.get(), -trap, MPFR_RNDN);
  mpfr_exp(t0_.get(), t0_.get(), MPFR_RNDN);
  mpfr_add_ui(t0_.get(), t0_.get(), 1, MPFR_RNDN);
  mpfr_ui_div(lambda_.get(), 1, t0_.get(), MPFR_RNDN);
  mpfr_set_d(t0_.get(), trap, MPFR_RNDN);
  mpfr_exp(t0_.get(), t0_.get(), MPFR_RNDN);
  mpfr_add_ui(t0_.get(), t0_.get(), 1, MPFR_RNDN);
  mpfr_ui_div(one_minus_lambda_.get(), 1, t0_.get(), MPFR_RNDN);
  mpfr_set_d(alpha_.get(), pr.adt[i], MPFR_RNDN);
  mpfr_exp(alpha_.get(), alpha_.get(), MPFR_RNDN);
  mpfr_mul_d(gamma_.get(), lambda_.get(), dt, MPFR_RNDN);
  mpfr_mul_d(beta_.get(), one_minus_lambda_.get(), dt, MPFR_RNDN);
  mpfr_mul(beta_.get(), beta_.get(), alpha_.get(), MPFR_RNDN);
  if (magnitudes_) mpfr_set(alpha_mag_.get(), alpha_.get(), MPFR_RNDU);  // α > 0
}

// θ[r] += π·tanh(angles[t,h,r])·dt, then cos θ and sin θ of the unreduced angle.
void PairRun::advance_angles(const Problem& pr, int64_t t, int64_t h, PairState& st) {
  const double dt = pr.dt[size_t(pr.th_index(t, h))];
  for (int64_t r = 0; r < R_; ++r) {
    mpfr_set_flt(t0_.get(), pr.angles[size_t(pr.angle_index(t, h, r))], MPFR_RNDN);
    mpfr_tanh(t0_.get(), t0_.get(), MPFR_RNDN);
    mpfr_mul(t0_.get(), t0_.get(), pi_.get(), MPFR_RNDN);
    mpfr_mul_d(t0_.get(), t0_.get(), dt, MPFR_RNDN);
    mpfr_add(st.angle[r].get(), st.angle[r].get(), t0_.get(), MPFR_RNDN);
    mpfr_sin_cos(sin_[r].get(), cos_[r].get(), st.angle[r].get(), MPFR_RNDN);
    if (!magnitudes_) continue;
    mpfr_abs(t0_.get(), t0_.get(), MPFR_RNDN);
    mpfr_add(st.angle_mag[r].get(), st.angle_mag[r].get(), t0_.get(), MPFR_RNDU);
    mpfr_abs(cos_mag_[r].get(), cos_[r].get(), MPFR_RNDU);
    mpfr_abs(sin_mag_[r].get(), sin_[r].get(), MPFR_RNDU);
  }
}

// Pair r < R is (2r, 2r+1) [mamba3_siso_fwd_kernel: reshape to (N/2, 2), split]:
//   (u0, u1) -> (u0·cos θ − u1·sin θ, u0·sin θ + u1·cos θ), each one rounding (fmms / fmma).
void PairRun::rotated(const std::vector<float>& v, const std::vector<float>& bias, const Problem& pr, int64_t t,
                      int64_t h, std::vector<Num>& out, std::vector<Num>& out_mag) {
  const int64_t g = pr.shape.group_of(h);
  for (int64_t n = 0; n < N_; ++n) {
    const float a = v[size_t(pr.bc_index(t, g, n))], b = bias[size_t(pr.bias_index(h, n))];
    mpfr_set_flt(u_[n].get(), a, MPFR_RNDN);
    mpfr_add_d(u_[n].get(), u_[n].get(), b, MPFR_RNDN);
    if (!magnitudes_) continue;
    mpfr_set_d(u_mag_[n].get(), std::fabs(double(a)), MPFR_RNDU);
    mpfr_add_d(u_mag_[n].get(), u_mag_[n].get(), std::fabs(double(b)), MPFR_RNDU);
  }
  for (int64_t r = 0; r < R_; ++r) {
    const size_t i = size_t(2 * r), j = i + 1;
    mpfr_fmms(out[i].get(), u_[i].get(), cos_[r].get(), u_[j].get(), sin_[r].get(), MPFR_RNDN);
    mpfr_fmma(out[j].get(), u_[i].get(), sin_[r].get(), u_[j].get(), cos_[r].get(), MPFR_RNDN);
    if (!magnitudes_) continue;
    mpfr_fmma(out_mag[i].get(), u_mag_[i].get(), cos_mag_[r].get(), u_mag_[j].get(), sin_mag_[r].get(), MPFR_RNDU);
    mpfr_fmma(out_mag[j].get(), u_mag_[i].get(), sin_mag_[r].get(), u_mag_[j].get(), cos_mag_[r].get(), MPFR_RNDU);
  }
  for (int64_t n = 2 * R_; n < N_; ++n) {  // pairs r >= R are not turned
    mpfr_set(out[n].get(), u_[n].get(), MPFR_RNDN);
    if (magnitudes_) mpfr_set(out_mag[n].get(), u_mag_[n].get(), MPFR_RNDU);
  }
}

// S[p,n] = α·S[p,n] + (β·x_prev[p])·b_prev[n] + (γ·x[p])·b[n]: fmma then fma, two roundings.
// Then the token's b and x become b_prev and x_prev.
void PairRun::update_state(const Problem& pr, int64_t t, int64_t h, PairState& st) {
  for (int64_t p = 0; p < P_; ++p) {
    const double x = pr.x[size_t(pr.x_index(t, h, p))];
    mpfr_mul(beta_x_prev_[p].get(), beta_.get(), st.x_prev[p].get(), MPFR_RNDN);
    mpfr_mul_d(gamma_x_[p].get(), gamma_.get(), x, MPFR_RNDN);
    if (!magnitudes_) continue;
    mpfr_mul(beta_x_prev_mag_[p].get(), beta_.get(), st.x_prev[p].get(), MPFR_RNDA);  // |·| rounded up
    mpfr_abs(beta_x_prev_mag_[p].get(), beta_x_prev_mag_[p].get(), MPFR_RNDN);
    mpfr_mul_d(gamma_x_mag_[p].get(), gamma_.get(), x, MPFR_RNDA);
    mpfr_abs(gamma_x_mag_[p].get(), gamma_x_mag_[p].get(), MPFR_RNDN);
  }
  for (int64_t p = 0; p < P_; ++p) {
    for (int64_t n = 0; n < N_; ++n) {
      const size_t k = size_t(p * N_ + n);
      mpfr_fmma(st.S[k].get(), alpha_.get(), st.S[k].get(), beta_x_prev_[p].get(), st.b_prev[n].get(), MPFR_RNDN);
      mpfr_fma(st.S[k].get(), gamma_x_[p].get(), b_[n].get(), st.S[k].get(), MPFR_RNDN);
      if (!magnitudes_) continue;
      mpfr_fmma(st.S_mag[k].get(), alpha_mag_.get(), st.S_mag[k].get(), beta_x_prev_mag_[p].get(),
                st.b_prev_mag[n].get(), MPFR_RNDU);
      mpfr_fma(st.S_mag[k].get(), gamma_x_mag_[p].get(), b_mag_[n].get(), st.S_mag[k].get(), MPFR_RNDU);
    }
  }
  std::swap(st.b_prev, b_);  // same precisions: the vectors trade places, nothing is copied
  std::swap(st.b_prev_mag, b_mag_);
  for (int64_t p = 0; p < P_; ++p) mpfr_set_flt(st.x_prev[p].get(), pr.x[size_t(pr.x_index(t, h, p))], MPFR_RNDN);
}

// y[p] = D·x[p] + Σ_n c[n]·S[p,n] (one fma per n, in increasing n), times z·σ(z) if z is given.
void PairRun::output(const Problem& pr, int64_t t, int64_t h, const PairState& st) {
  const double D = pr.has_D() ? pr.D[size_t(h)] : 0.0;
  for (int64_t p = 0; p < P_; ++p) {
    const size_t xi = size_t(pr.x_index(t, h, p));
    const float x = pr.x[xi];
    mpfr_set_flt(y_[p].get(), x, MPFR_RNDN);
    mpfr_mul_d(y_[p].get(), y_[p].get(), D, MPFR_RNDN);
    mpfr_set_d(y_mag_[p].get(), std::fabs(D * double(x)), MPFR_RNDU);  // exact: 48 bits, normal in double
    for (int64_t n = 0; n < N_; ++n) {
      const size_t k = size_t(p * N_ + n);
      mpfr_fma(y_[p].get(), c_[n].get(), st.S[k].get(), y_[p].get(), MPFR_RNDN);
    }
    if (magnitudes_) {
      for (int64_t n = 0; n < N_; ++n) {
        const size_t k = size_t(p * N_ + n);
        mpfr_fma(y_mag_[p].get(), c_mag_[n].get(), st.S_mag[k].get(), y_mag_[p].get(), MPFR_RNDU);
      }
    }
    if (!pr.has_z()) continue;
    const double z = pr.z[xi];
    mpfr_set_d(t0_.get(), -z, MPFR_RNDN);
    mpfr_exp(t0_.get(), t0_.get(), MPFR_RNDN);
    mpfr_add_ui(t0_.get(), t0_.get(), 1, MPFR_RNDN);
    mpfr_set_d(t1_.get(), z, MPFR_RNDN);
    mpfr_div(t1_.get(), t1_.get(), t0_.get(), MPFR_RNDN);  // z·σ(z) = z / (1 + e^-z)
    mpfr_mul(y_[p].get(), y_[p].get(), t1_.get(), MPFR_RNDN);
    if (!magnitudes_) continue;
    mpfr_abs(m0_.get(), t1_.get(), MPFR_RNDU);
    mpfr_mul(y_mag_[p].get(), y_mag_[p].get(), m0_.get(), MPFR_RNDU);
  }
}

void PairRun::step(const Problem& pr, int64_t t, int64_t h, PairState& st) {
  gates(pr, t, h);
  advance_angles(pr, t, h, st);
  rotated(pr.B, pr.B_bias, pr, t, h, b_, b_mag_);
  rotated(pr.C, pr.C_bias, pr, t, h, c_, c_mag_);
  update_state(pr, t, h, st);
  output(pr, t, h, st);
}

void PairRun::reduced_angle(const PairState& st, int64_t r, mpfr_ptr out) {
  mpfr_srcptr theta = st.angle[size_t(r)].get();
  mpfr_div(t0_.get(), theta, two_pi_.get(), MPFR_RNDN);
  mpfr_floor(t0_.get(), t0_.get());                           // k, exact below 2^bits
  mpfr_fms(out, t0_.get(), two_pi_.get(), theta, MPFR_RNDN);  // k·2π − θ, one rounding
  mpfr_neg(out, out, MPFR_RNDN);
  // θ/2π rounded up to an integer k leaves θ − 2πk just below 0: one more turn.
  if (mpfr_sgn(out) < 0) mpfr_add(out, out, two_pi_.get(), MPFR_RNDN);
  if (mpfr_cmp(out, two_pi_.get()) >= 0) mpfr_sub(out, out, two_pi_.get(), MPFR_RNDN);
}

}  // namespace ssmv::ref::mamba3
