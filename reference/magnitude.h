// The magnitudes beside the reference's values, in double: upper bounds of the
// recurrence run on absolute values,
//   Sabs_t[p,n] = |a_t|·Sabs_{t-1}[p,n] + |δ_t·B_t[n]|·|x_t[p]|,   Sabs_0 = |h0|,
//   M_ungated[p] = Σ_n |C_n|·Sabs[p,n] + |D·x[p]|,   M_y[p] = |zσ(z)|·M_ungated[p].
//
// Why they are upper bounds (u = 2^-53; fl() rounds to nearest, so fl(v) >= v·(1-u)
// for v >= 0 as long as v is 0 or >= DBL_MIN = 2^-1022, i.e. no underflow):
// * The coefficients come from the certified check run rounded up (a_up >= a2, δ_up >=
//   |δ2|), and the check run is within 2^-64 of the exact value (that is what the
//   certification vouches for). They are inflated by K = 1 + 2^-46 once per token:
//     â = fl(a_up·K) >= a·(1-2^-64)·(1-u)·K,   ŵ_n = fl(fl(δ_up·|B_n|)·K) >= |δ·B_n|·(1-2^-64)·(1-u)^2·K.
// * One step: Ŝ_t = fl(fl(â·Ŝ_{t-1}) + fl(ŵ_n·|x|)) >= (1-u)^2·(â·Ŝ_{t-1} + ŵ_n·|x|)
//     >= (1-u)^4·(1-2^-64)·K·(a·Ŝ_{t-1} + |δB_n|·|x|) >= a·Ŝ_{t-1} + |δB_n|·|x|,
//   since (1-u)^4·(1-2^-64)·(1+2^-46) >= 1 + 2^-46 - 2^-51 - 2^-64 > 1. With Ŝ_0 = |h0|
//   exact, induction gives Ŝ_t >= Sabs_t for EVERY t (no length limit); the price is an
//   overestimate by at most K^t·(1+u)^(3t), a relative 2^-25 at t = 10^6.
// * Output: N products and N-1 additions of non-negative terms (recursive summation),
//   + |D·x| (exact in double: 24 × 24 significant bits), × |gate|_up, × Ky with
//   Ky = 1 + (N+8)·2^-52: at most N+3 roundings reach any term, and
//   (1-u)^(N+3)·(1-2^-64)·(1+(N+8)·2^-52) >= 1 + (N+13)·u - 2^-64 - (N+3)(2N+16)·u^2 > 1
//   for any N < 2^25.
// Below DBL_MIN rounding is absolute (up to 2^-1075), so a partial value that underflows
// may make a later bound too small by about that much; the certification therefore
// compares against max(magnitude, kMagnitudeFloor = DBL_MIN) (reference.h).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "spec/problem.h"

namespace ssmv::ref {

class MagnitudeRecurrence {
 public:
  static constexpr double kCoefficientInflation = 1.0 + 0x1p-46;  // K above

  MagnitudeRecurrence(int64_t P, int64_t N)
      : P_(P), N_(N), sabs_(P * N), w_(N), abs_c_(N), sum_abs_c_sabs_(P), abs_dx_(P),
        ungated_(P), y_(P), output_inflation_(1.0 + double(N + 8) * 0x1p-52) {}

  void load_zero() { std::fill(sabs_.begin(), sabs_.end(), 0.0); }
  void load(const float* h0) {  // [P, N]
    for (int64_t i = 0; i < P_ * N_; ++i) sabs_[i] = std::fabs(double(h0[i]));
  }
  void load(const double* sabs0) {  // [P, N], already an upper bound (a previous result's magnitude)
    for (int64_t i = 0; i < P_ * N_; ++i) sabs_[i] = sabs0[i];
  }

  // Advances by token t of head h. decay_up >= a2 and abs_delta_up >= |δ2| are the
  // certified check run's values rounded up; abs_gate_up [P] likewise for |zσ(z)| (null
  // without z).
  void step(const Problem& pr, int64_t t, int64_t h, double abs_delta_up, double decay_up,
            const double* abs_gate_up) {
    const int64_t g = pr.shape.group_of(h);
    const double a = decay_up * kCoefficientInflation;
    for (int64_t n = 0; n < N_; ++n) {
      w_[n] = (abs_delta_up * std::fabs(double(pr.B[pr.bc_index(t, g, n)]))) * kCoefficientInflation;
      abs_c_[n] = std::fabs(double(pr.C[pr.bc_index(t, g, n)]));
    }
    for (int64_t p = 0; p < P_; ++p) {
      const double x = double(pr.x[pr.x_index(t, h, p)]);
      const double ax = std::fabs(x);
      double* s = &sabs_[p * N_];
      double sum = 0;
      for (int64_t n = 0; n < N_; ++n) {
        s[n] = a * s[n] + w_[n] * ax;
        sum += abs_c_[n] * s[n];
      }
      sum_abs_c_sabs_[p] = sum;
      abs_dx_[p] = std::fabs(double(pr.d_value(h, p)) * x);  // exact: 24 × 24 bits
      ungated_[p] = (sum + abs_dx_[p]) * output_inflation_;
      y_[p] = abs_gate_up ? ((sum + abs_dx_[p]) * abs_gate_up[p]) * output_inflation_ : ungated_[p];
    }
  }

  const double* state() const { return sabs_.data(); }  // [P, N] upper bounds of Sabs
  const double* sum_abs_c_sabs() const { return sum_abs_c_sabs_.data(); }  // [P] Σ|C|·Ŝ (not inflated)
  const double* abs_dx() const { return abs_dx_.data(); }      // [P] |D·x| exact
  const double* y_ungated() const { return ungated_.data(); }  // [P] bound of |y_ungated| scale
  const double* y() const { return y_.data(); }                // [P] bound of |y| scale

 private:
  int64_t P_, N_;
  std::vector<double> sabs_;  // [P, N]
  std::vector<double> w_, abs_c_;  // [N]
  std::vector<double> sum_abs_c_sabs_, abs_dx_, ungated_, y_;  // [P]
  double output_inflation_;  // Ky above
};

}  // namespace ssmv::ref
