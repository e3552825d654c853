// The magnitudes are upper bounds (reference/magnitude.h): checked against the
// recurrence on absolute values evaluated here independently in MPFR at 400 bits,
//   Sabs_t = a_t·Sabs_{t-1} + |δ_t·B_t|·|x_t|,  M_y = |zσ(z)|·(Σ_n |C_n|·Sabs_n + |D·x|),
// and tight: within a relative 2^-30 (the inflation is (1 + 2^-46) per token, T = 40).
#include <gtest/gtest.h>

#include <vector>

#include "reference/reference.h"
#include "reference/tests/reference_test_util.h"

namespace ssmv::ref {
namespace {

using testing::Mp;
using testing::random_problem;

// δ after bias, softplus and clamp, and a = exp(δ·A), at 400 bits (Mp's default).
void delta_and_decay(const Problem& pr, int64_t t, int64_t h, Mp& delta, Mp& decay) {
  mpfr_set_d(delta.get(), pr.dt[pr.dt_index(t, h)], MPFR_RNDN);
  if (pr.has_dt_bias()) mpfr_add_d(delta.get(), delta.get(), pr.dt_bias[h], MPFR_RNDN);
  if (pr.dt_softplus) {
    mpfr_exp(delta.get(), delta.get(), MPFR_RNDN);
    mpfr_log1p(delta.get(), delta.get(), MPFR_RNDN);
  }
  if (mpfr_cmp_d(delta.get(), pr.dt_limit_lo) < 0) mpfr_set_d(delta.get(), pr.dt_limit_lo, MPFR_RNDN);
  if (mpfr_cmp_d(delta.get(), pr.dt_limit_hi) > 0) mpfr_set_d(delta.get(), pr.dt_limit_hi, MPFR_RNDN);
  mpfr_mul_d(decay.get(), delta.get(), pr.A[h], MPFR_RNDN);
  mpfr_exp(decay.get(), decay.get(), MPFR_RNDN);
}

void expect_tight_upper_bound(double bound, mpfr_srcptr exact, const char* what, int64_t i) {
  EXPECT_LE(mpfr_cmp_d(exact, bound), 0) << what << " " << i << ": bound " << std::hexfloat << bound
                                         << " below exact " << mpfr_get_d(exact, MPFR_RNDN);
  Mp loose;
  mpfr_mul_d(loose.get(), exact, 1 + 0x1p-30, MPFR_RNDU);
  EXPECT_GE(mpfr_cmp_d(loose.get(), bound), 0) << what << " " << i << ": bound not tight";
}

TEST(ReferenceMagnitude, UpperBoundsOfTheAbsoluteRecurrence) {
  const int64_t T = 40, H = 2, P = 3, N = 4;
  Problem pr = random_problem({0, T}, H, P, N, 1, 61, true);
  pr.A[1] = 0.5f;  // a > 1 too: growth as well as decay
  const ExactResult r = compute(pr);

  std::vector<Mp> sabs(H * P * N);
  for (int64_t i = 0; i < H * P * N; ++i) mpfr_set_d(sabs[i].get(), std::fabs(pr.initial_state[i]), MPFR_RNDN);
  Mp delta, decay, term, sum;
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t h = 0; h < H; ++h) {
      delta_and_decay(pr, t, h, delta, decay);
      for (int64_t p = 0; p < P; ++p) {
        mpfr_set_zero(sum.get(), 1);
        for (int64_t n = 0; n < N; ++n) {
          Mp& s = sabs[(h * P + p) * N + n];
          mpfr_mul(s.get(), s.get(), decay.get(), MPFR_RNDN);
          mpfr_mul_d(term.get(), delta.get(), std::fabs(pr.B[pr.bc_index(t, 0, n)] * pr.x[pr.x_index(t, h, p)]),
                     MPFR_RNDN);  // |B·x| exact in float: 8 × 8 significant bits
          mpfr_add(s.get(), s.get(), term.get(), MPFR_RNDN);
          mpfr_mul_d(term.get(), s.get(), std::fabs(pr.C[pr.bc_index(t, 0, n)]), MPFR_RNDN);
          mpfr_add(sum.get(), sum.get(), term.get(), MPFR_RNDN);
        }
        const size_t i = pr.x_index(t, h, p);
        mpfr_add_d(sum.get(), sum.get(), std::fabs(double(pr.D[h]) * pr.x[i]), MPFR_RNDN);
        // gate |z / (1 + e^-z)|
        Mp g(-double(pr.z[i]));
        mpfr_exp(g.get(), g.get(), MPFR_RNDN);
        mpfr_add_ui(g.get(), g.get(), 1, MPFR_RNDN);
        mpfr_d_div(g.get(), std::fabs(double(pr.z[i])), g.get(), MPFR_RNDN);
        mpfr_mul(sum.get(), sum.get(), g.get(), MPFR_RNDN);
        expect_tight_upper_bound(r.y.magnitude[i], sum.get(), "y magnitude", int64_t(i));
      }
    }
  }
  for (int64_t i = 0; i < H * P * N; ++i)
    expect_tight_upper_bound(r.final_state.magnitude[i], sabs[i].get(), "state magnitude", i);
}

// Decay below double's range: δ = 60, A = -16 give a = e^-960 ≈ 2^-1385. After one input
// token the state decays as 2^-1385, 2^-2770, 2^-4155 (exact in MPFR's exponent range, 0 in
// double). The reference certifies these values, and every magnitude stays a nonzero
// upper bound of |value| (the floors and 2η of magnitude.h); a zero state with zero
// input has magnitude 0 and value exactly 0.
TEST(ReferenceMagnitude, DecayBelowDoubleRangeStaysBounded) {
  Problem pr = testing::zero_problem({0, 4}, 2, 1, 2, 1);
  for (int64_t t = 0; t < 4; ++t) pr.dt.set(pr.dt_index(t, 0), 60.0f);  // head 1: dt = 0, x = 0
  pr.A = {-16.0f, -1.0f};
  pr.B = {1.0f, -0.75f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f};
  pr.C.assign(8, 0.5f);
  pr.x.set(pr.x_index(0, 0, 0), 1.5f);  // token 0, head 0 only
  Options o;
  o.state_positions = {2, 3};
  const ExactResult r = compute(pr, o);
  auto bounded = [](const ExactValues& v, size_t i) {
    Mp a;
    mpfr_abs(a.get(), v.value[i].backend().data(), MPFR_RNDN);
    return v.magnitude[i] > 0 && mpfr_cmp_d(a.get(), v.magnitude[i]) <= 0;
  };
  for (int64_t t = 1; t < 4; ++t) {
    const size_t i = pr.x_index(t, 0, 0);
    EXPECT_FALSE(mpfr_zero_p(r.y.value[i].backend().data())) << "t " << t;
    EXPECT_EQ(r.y.nearest[i], 0.0) << "t " << t;  // below double's range
    EXPECT_TRUE(bounded(r.y, i)) << "t " << t;
  }
  for (const ExactValues* v : {&r.states_at[0].state, &r.states_at[1].state, &r.final_state}) {
    for (size_t n = 0; n < 2; ++n) {
      EXPECT_LT(mpfr_get_exp(v->value[n].backend().data()), -1300);
      EXPECT_TRUE(bounded(*v, n));
    }
    // Head 1 (elements 2, 3): zero state, zero input: magnitude 0, value exactly 0.
    for (size_t n = 2; n < 4; ++n) {
      EXPECT_TRUE(mpfr_zero_p(v->value[n].backend().data()));
      EXPECT_EQ(v->magnitude[n], 0.0);
      EXPECT_EQ(v->certified_error[n], 0.0);
    }
  }
}

}  // namespace
}  // namespace ssmv::ref
