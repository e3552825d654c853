// One (sequence, head) pair of the Mamba-3 SISO recurrence at one precision, token by token
// (docs/mamba3-semantics.md §3). Every operation is one correctly rounded MPFR operation at
// the run's precision (to nearest); the magnitudes beside the values (when asked for) are the
// same recurrence on absolute values at kMagnitudeBits, rounded up. All variables are allocated
// once per PairRun and reused for every pair and token: no allocation in the token loop.
#pragma once

#include <mpfr.h>

#include <cstdint>
#include <vector>

#include "reference/mamba3/pair_state.h"
#include "spec/mamba3/problem.h"

namespace ssmv::ref::mamba3 {

using ssmv::mamba3::Problem;

class PairRun {
 public:
  // `magnitudes`: also run the recurrence on absolute values (the check run's, which certify
  // against; the working run needs none).
  PairRun(const ssmv::mamba3::Shape& shape, mpfr_prec_t bits, bool magnitudes = true);

  mpfr_prec_t bits() const { return bits_; }

  // Sets `st` to sequence s, head h's initial four-part state of `pr` (zeros without one).
  void start(const Problem& pr, int64_t s, int64_t h, PairState& st) const;

  // Token t (packed position) of head h: advances `st` and leaves y[p] and its magnitude.
  void step(const Problem& pr, int64_t t, int64_t h, PairState& st);
  mpfr_srcptr y(int64_t p) const { return y_[size_t(p)].get(); }
  mpfr_srcptr y_magnitude(int64_t p) const { return y_mag_[size_t(p)].get(); }

  // θ[r] of `st` reduced to [0, 2π): θ − 2π·floor(θ / 2π), into out (the run's precision).
  void reduced_angle(const PairState& st, int64_t r, mpfr_ptr out);

 private:
  void gates(const Problem& pr, int64_t t, int64_t h);
  void advance_angles(const Problem& pr, int64_t t, int64_t h, PairState& st);
  // u = v[t,g,:] + bias[h,:] turned by θ, with its magnitude.
  void rotated(const std::vector<float>& v, const std::vector<float>& bias, const Problem& pr, int64_t t, int64_t h,
               std::vector<Num>& out, std::vector<Num>& out_mag);
  void update_state(const Problem& pr, int64_t t, int64_t h, PairState& st);
  void output(const Problem& pr, int64_t t, int64_t h, const PairState& st);

  int64_t P_, N_, R_;
  mpfr_prec_t bits_;
  bool magnitudes_;
  // Scalars of the token: λ = σ(trap), 1 − λ = σ(−trap), α, β, γ; π and 2π; scratch.
  Num lambda_, one_minus_lambda_, alpha_, beta_, gamma_, pi_, two_pi_, t0_, t1_;
  Num alpha_mag_, m0_, m1_;                 // kMagnitudeBits
  std::vector<Num> cos_, sin_;              // [R]
  std::vector<Num> cos_mag_, sin_mag_;      // [R] |cos|, |sin| rounded up
  std::vector<Num> u_, u_mag_;              // [N] B or C plus bias, before the turn
  std::vector<Num> b_, c_, b_mag_, c_mag_;  // [N] the token's b and c, turned
  std::vector<Num> beta_x_prev_, gamma_x_;  // [P] β·x_prev, γ·x
  std::vector<Num> beta_x_prev_mag_, gamma_x_mag_;
  std::vector<Num> y_, y_mag_;  // [P]
};

}  // namespace ssmv::ref::mamba3
