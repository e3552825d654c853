// The magnitudes beside the reference's values, in double: upper bounds of the
// recurrence run on absolute values,
//   Sabs_t[p,n] = a_t·Sabs_{t-1}[p,n] + |δ_t·B_t[n]|·|x_t[p]|,   Sabs_0 = |h0|,
//   M_ungated[p] = Σ_n |C_n|·Sabs[p,n] + |D·x[p]|,   M_y[p] = |zσ(z)|·M_ungated[p],
// each 0 exactly when every term is 0.
//
// Why they are upper bounds, in every range (u = 2^-53, η = 2^-1074 the smallest
// subnormal; for v >= 0, round-to-nearest gives fl(v) >= v·(1-u) - η/2: relative error
// in the normal range, absolute error η/2 in the subnormal range):
// * Coefficients come from the certified check run rounded away from zero (a_up >= a2,
//   δ_up >= |δ2|), which the certification places within 2^-64 of the exact values.
//   They are raised to at least F = 2^-1020 (so they stay normal and their rounding
//   stays relative; a bigger bound is still a bound) and inflated by K = 1 + 2^-46:
//     â = fl(max(a_up, F)·K) >= a·(1-2^-64)·(1-u)·K,
//     ŵ_n = fl(max(fl(δ_up·|B_n|), F)·K) >= |δ·B_n|·(1-2^-64)·(1-u)^2·K   (0 if δ or B_n is 0).
// * One step: with X = â·Ŝ_{t-1} + ŵ_n·|x|, three roundings and then + 2η (only when X
//   can be nonzero, i.e. Ŝ_{t-1} > 0 or ŵ_n·|x| > 0):
//     Ŝ_t = fl(fl(fl(â·Ŝ_{t-1}) + fl(ŵ_n·|x|)) + 2η) >= X·(1-u)^3
//   (the absolute losses, at most 1.5η before the last rounding and η/2 in it, are repaid
//   by the 2η), and X·(1-u)^3 >= (1-u)^6·(1-2^-64)·K·(a·Ŝ_{t-1} + |δB_n|·|x|) >=
//   a·Ŝ_{t-1} + |δB_n|·|x| since (1-u)^6·(1-2^-64)·(1+2^-46) > 1 + 2^-47. With Ŝ_0 = |h0|
//   exact, induction gives Ŝ_t >= Sabs_t for EVERY t (no length limit); the price is an
//   overestimate by at most K^t·(1+u)^(3t) (a relative 2^-25 at t = 10^6) plus the
//   additions of 2η and F, which matter only below 2^-1000.
// * Output: N products and N additions of non-negative terms (recursive summation from 0),
//   + |D·x| (exact in double: 24 × 24 significant bits), × Ky = 1 + (N+8)·2^-52, then
//   + (2N+4)·η when some term is nonzero; M_y multiplies by |gate|_up (>= |g2|, rounded
//   away from zero) before Ky. At most N+5 roundings reach any term, and
//   (1-u)^(N+5)·(1-2^-64)^2·(1+(N+8)·2^-52) >= 1 + (N+11)·u - 2^-63 - (N+5)(2N+16)·u^2 > 1
//   for any N < 2^25; the absolute losses (at most (N+3)·η) are repaid by (2N+4)·η.
// The one exception: where MPFR itself underflows (a value below 2^-(2^30), e.g.
// exp(δ·A) for δ·A < -7.4e8) both runs return 0 and the magnitude may be 0; no format
// can tell such a value from 0.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "reference/reference.h"
#include "spec/problem.h"
#include "spec/vector_clones.h"

namespace ssmv::ref {

class MagnitudeRecurrence {
 public:
  static constexpr double kCoefficientInflation = 1.0 + 0x1p-46;  // K above
  static constexpr double kCoefficientFloor = 0x1p-1020;          // F above
  static constexpr double kEta = 0x1p-1074;                       // η above

  MagnitudeRecurrence(int64_t P, int64_t N)
      : P_(P), N_(N), sabs_(P * N), w_(N), abs_c_(N), sum_abs_c_sabs_(P), abs_dx_(P),
        ungated_(P), y_(P), reads_state_(size_t(P)), output_inflation_(1.0 + double(N + 8) * 0x1p-52),
        output_slack_(double(2 * N + 4) * kEta) {}

  void load_zero() { std::fill(sabs_.begin(), sabs_.end(), 0.0); }
  void load(const float* h0) {  // [P, N]
    for (int64_t i = 0; i < P_ * N_; ++i) sabs_[i] = std::fabs(double(h0[i]));
  }
  void load(const double* sabs0) {  // [P, N], already an upper bound (a previous result's magnitude)
    for (int64_t i = 0; i < P_ * N_; ++i) sabs_[i] = sabs0[i];
  }

  // Advances by token t of head h. decay_up >= a2 and abs_delta_up >= |δ2| are the
  // certified check run's values rounded away from zero; abs_gate_up [P] likewise for
  // |zσ(z)| (null without z). The same as begin_step, every row's advance (advance_row) and
  // Σ_n |C_n|·Ŝ_n, then finish_row for every row.
  void step(const Problem& pr, int64_t t, int64_t h, double abs_delta_up, double decay_up,
            const double* abs_gate_up);  // magnitude.cpp

  // The step in parts, for a caller that advances the rows itself beside other per-element
  // work (the fast tier's fused rows, tiered.cpp): begin_step forms the token's coefficients
  // (â, ŵ_n, |C_n|); the caller advances row p's Ŝ_n by advance() with |x_p| and sums
  // Σ_n |C_n|·Ŝ_n in the order of n from zero; finish_row takes the sum and whether some
  // |C_n|·Ŝ_n > 0, and forms the row's output magnitudes.
  void begin_step(const Problem& pr, int64_t t, int64_t h, double abs_delta_up, double decay_up);
  double a() const { return a_; }                           // â of the token
  const double* w() const { return w_.data(); }            // [N] ŵ_n of the token
  const double* abs_c() const { return abs_c_.data(); }    // [N] |C_n| of the token
  double* mutable_state() { return sabs_.data(); }         // [P, N] Ŝ, for the caller's advance
  void finish_row(const Problem& pr, int64_t t, int64_t h, int64_t p, double sum_abs_c_sabs, bool reads_state,
                  const double* abs_gate_up);
  // One element's step: Ŝ_n = fl(fl(fl(â·Ŝ_n) + fl(ŵ_n·|x|)) + 2η) where the step can be
  // nonzero (Ŝ_n > 0, or ŵ_n > 0 and |x| > 0), else the sum without 2η (the header's
  // derivation). Branch-free (a select on the bits for 2η, | for ||), so loops over n vectorise.
  static double advance(double s, double w, double a, double abs_x) {
    const bool live = (s > 0) | ((w > 0) & (abs_x > 0));
    return (a * s + w * abs_x) + pick(live, 2 * kEta, 0.0);
  }

  const double* state() const { return sabs_.data(); }  // [P, N] upper bounds of Sabs
  const double* sum_abs_c_sabs() const { return sum_abs_c_sabs_.data(); }  // [P] Σ|C|·Ŝ (not inflated)
  const double* abs_dx() const { return abs_dx_.data(); }      // [P] |D·x| exact
  // Whether y[p] reads the state: some |C_n|·Ŝ_n > 0 (false: every C_n·S_n is exactly 0).
  bool reads_state(int64_t p) const { return reads_state_[size_t(p)] != 0; }
  const double* y_ungated() const { return ungated_.data(); }  // [P] bound of |y_ungated| scale
  const double* y() const { return y_.data(); }                // [P] bound of |y| scale

 private:
  int64_t P_, N_;
  std::vector<double> sabs_;  // [P, N]
  std::vector<double> w_, abs_c_;  // [N]
  std::vector<double> sum_abs_c_sabs_, abs_dx_, ungated_, y_;  // [P]
  std::vector<unsigned char> reads_state_;                      // [P]
  double a_ = 0;             // â of the token (begin_step)
  std::vector<float> row_b_, row_c_;  // a token's B and C [N] held as bits, decoded
  double output_inflation_;  // Ky above
  double output_slack_;      // (2N+4)·η above
};

// What both tiers hand to a Sink for one token of one (sequence, head) pair: the spans of
// the P values they computed, the magnitudes from `mag` (after this token's step).
struct TokenSpans {
  std::span<const HandedValue> y;
  std::span<const double> y_nearest, y_certified_error, sum_abs_CS, y_ungated;
};
inline TokenOutputs token_outputs(int64_t s, int64_t t, int64_t h, double delta, double decay,
                                  const TokenSpans& v, const MagnitudeRecurrence& mag, size_t P) {
  TokenOutputs out;
  out.sequence = s;
  out.token = t;
  out.head = h;
  out.delta = delta;
  out.decay = decay;
  out.y = v.y;
  out.y_nearest = v.y_nearest;
  out.y_magnitude = {mag.y(), P};
  out.y_certified_error = v.y_certified_error;
  out.sum_abs_CS = v.sum_abs_CS;
  out.sum_abs_C_Sabs = {mag.sum_abs_c_sabs(), P};
  out.abs_Dx = {mag.abs_dx(), P};
  out.y_ungated = v.y_ungated;
  return out;
}

}  // namespace ssmv::ref
