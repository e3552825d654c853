// Hand-derived cases (T = 1..3, N = 1..2) whose exact values are short expressions in
// e and ln 2; the expected values are computed here at 400 bits with MPFR directly.
// The MPFR tier returns its 127-bit run; after a handful of roundings it is within 2^-120
// of the exact value, far inside the 2^-64 it certifies.
#include <gtest/gtest.h>

#include "reference/reference.h"
#include "reference/tests/reference_test_util.h"

namespace ssmv::ref {
namespace {

using testing::close_to;
using testing::Mp;
using testing::zero_problem;

constexpr int kExpectBits = 120;

// e^k at 400 bits.
void exp_of(Mp& r, double k) {
  mpfr_set_d(r.get(), k, MPFR_RNDN);
  mpfr_exp(r.get(), r.get(), MPFR_RNDN);
}

// T = 1, N = 1, P = 1, no softplus: δ = 0.5, a = exp(0.5·(−2)) = e^-1, h0 = 4,
//   S = e^-1·4 + (0.5·3)·2 = 4/e + 3,   y = 0.25·S = 1/e + 3/4.
// Every term is positive, so Sabs = S and the magnitude of y is y itself.
TEST(ReferenceClosedForm, OneTokenDecayOfInitialStatePlusInput) {
  Problem pr = zero_problem({0, 1}, 1, 1, 1, 1);
  pr.dt = {0.5f};
  pr.A = {-2.0f};
  pr.B = {3.0f};
  pr.C = {0.25f};
  pr.x = {2.0f};
  pr.initial_state = {4.0f};
  const ExactResult r = compute(pr, testing::mpfr_tier());

  Mp S, y;
  exp_of(S, -1);
  mpfr_mul_ui(S.get(), S.get(), 4, MPFR_RNDN);
  mpfr_add_ui(S.get(), S.get(), 3, MPFR_RNDN);  // 4/e + 3
  mpfr_div_ui(y.get(), S.get(), 4, MPFR_RNDN);  // 1/e + 3/4
  EXPECT_TRUE(close_to(r.final_state, 0, S.get(), kExpectBits));
  EXPECT_TRUE(close_to(r.y, 0, y.get(), kExpectBits));
  EXPECT_EQ(r.y.nearest[0], mpfr_get_d(y.get(), MPFR_RNDN));
  EXPECT_EQ(r.delta[0], 0.5);
  EXPECT_EQ(r.decay[0], std::exp(-1.0));  // glibc exp is correctly rounded at -1
  // Magnitudes: upper bounds, and tight (the inflation is about 2^-45 here).
  EXPECT_GE(r.y.magnitude[0], r.y.nearest[0]);
  EXPECT_LE(r.y.magnitude[0], r.y.nearest[0] * (1 + 0x1p-40));
  EXPECT_GE(r.final_state.magnitude[0], r.final_state.nearest[0]);
  EXPECT_LE(r.final_state.magnitude[0], r.final_state.nearest[0] * (1 + 0x1p-40));
  EXPECT_EQ(r.abs_Dx[0], 0.0);
}

// T = 2, N = 2, P = 1, softplus of dt = 0: δ = log(1 + e^0) = ln 2 and A = −1 give
// a = e^{−ln 2} = 1/2. With S0 = 0, B = [(1, 2), (−1, 1/2)], x = (2, 4), C = [(1, 1), (1/2, −1)]:
//   t0: S = ln2·(1·2, 2·2) = ln2·(2, 4);           y0 = ln2·(2 + 4) = 6 ln2
//   t1: S = ln2·(2/2 − 1·4, 4/2 + 0.5·4) = ln2·(−3, 4); y1 = ln2·(−3/2 − 4) = −5.5 ln2
// Sabs after t1 = ln2·(1 + 4, 2 + 2) = ln2·(5, 4), so |y1|'s magnitude is ln2·(5/2 + 4) = 6.5 ln2.
TEST(ReferenceClosedForm, TwoTokensSoftplusOfZeroHalvesTheState) {
  Problem pr = zero_problem({0, 2}, 1, 1, 2, 1);
  pr.dt_softplus = true;
  pr.dt = {0.0f, 0.0f};
  pr.A = {-1.0f};
  pr.B = {1.0f, 2.0f, -1.0f, 0.5f};
  pr.x = {2.0f, 4.0f};
  pr.C = {1.0f, 1.0f, 0.5f, -1.0f};
  const ExactResult r = compute(pr, testing::mpfr_tier());

  Mp ln2;
  mpfr_const_log2(ln2.get(), MPFR_RNDN);
  Mp e;
  mpfr_mul_ui(e.get(), ln2.get(), 6, MPFR_RNDN);
  EXPECT_TRUE(close_to(r.y, 0, e.get(), kExpectBits));
  mpfr_mul_d(e.get(), ln2.get(), -5.5, MPFR_RNDN);
  EXPECT_TRUE(close_to(r.y, 1, e.get(), kExpectBits));
  mpfr_mul_si(e.get(), ln2.get(), -3, MPFR_RNDN);
  EXPECT_TRUE(close_to(r.final_state, 0, e.get(), kExpectBits));
  mpfr_mul_si(e.get(), ln2.get(), 4, MPFR_RNDN);
  EXPECT_TRUE(close_to(r.final_state, 1, e.get(), kExpectBits));

  EXPECT_EQ(r.delta[0], mpfr_get_d(ln2.get(), MPFR_RNDN));
  EXPECT_EQ(r.decay[1], 0.5);
  const double mag1 = 6.5 * mpfr_get_d(ln2.get(), MPFR_RNDN);
  EXPECT_GE(r.y.magnitude[1], mag1);
  EXPECT_LE(r.y.magnitude[1], mag1 * (1 + 0x1p-40));
  EXPECT_NEAR(r.sum_abs_CS[1], 5.5 * mpfr_get_d(ln2.get(), MPFR_RNDN), 0x1p-50);
  // Σ|C|·Sabs carries the per-token inflation (1 + 2^-46) of the upper bound (magnitude.h).
  EXPECT_GE(r.sum_abs_C_Sabs[1], mag1 * (1 - 0x1p-52));
  EXPECT_LE(r.sum_abs_C_Sabs[1], mag1 * (1 + 0x1p-40));
}

// T = 3, N = 1, H = 2, softplus then clamp to [1/8, 1] (the clamp acts AFTER softplus):
//   head 0: dt = −20, softplus ≈ 2.06e-9 < 1/8, so δ = 1/8; A = −8: a = e^-1.
//   head 1: dt = 1 + bias 1/2, softplus(1.5) ≈ 1.70 > 1, so δ = 1;  A = −1: a = e^-1.
// B = x = C = 1, D = (1/2, 1/4), S0 = 0: S_t = δ·(1 + e^-1 + ... + e^-(t-1)),
//   y_3 = δ·(1 + e^-1 + e^-2) + D.
TEST(ReferenceClosedForm, ThreeTokensSoftplusThenClampBothSides) {
  Problem pr = zero_problem({0, 3}, 2, 1, 1, 1);
  pr.dt_softplus = true;
  pr.dt_limit_lo = 0.125f;
  pr.dt_limit_hi = 1.0f;
  pr.dt = {-20.0f, 1.0f, -20.0f, 1.0f, -20.0f, 1.0f};
  pr.dt_bias = {0.0f, 0.5f};
  pr.A = {-8.0f, -1.0f};
  pr.B = {1.0f, 1.0f, 1.0f};
  pr.C = {1.0f, 1.0f, 1.0f};
  pr.x.assign(6, 1.0f);
  pr.D = {0.5f, 0.25f};
  const ExactResult r = compute(pr, testing::mpfr_tier());

  Mp sum(1.0), e1, e2;
  exp_of(e1, -1);
  exp_of(e2, -2);
  mpfr_add(sum.get(), sum.get(), e1.get(), MPFR_RNDN);
  mpfr_add(sum.get(), sum.get(), e2.get(), MPFR_RNDN);  // 1 + e^-1 + e^-2
  Mp y0, y1;
  mpfr_mul_d(y0.get(), sum.get(), 0.125, MPFR_RNDN);
  mpfr_add_d(y0.get(), y0.get(), 0.5, MPFR_RNDN);
  mpfr_add_d(y1.get(), sum.get(), 0.25, MPFR_RNDN);
  EXPECT_TRUE(close_to(r.y, 2 * 2 + 0, y0.get(), kExpectBits));  // [t = 2, h = 0, p = 0]
  EXPECT_TRUE(close_to(r.y, 2 * 2 + 1, y1.get(), kExpectBits));
  for (int t = 0; t < 3; ++t) {
    EXPECT_EQ(r.delta[t * 2 + 0], 0.125);
    EXPECT_EQ(r.delta[t * 2 + 1], 1.0);
    EXPECT_EQ(r.abs_Dx[t * 2 + 0], 0.5);
  }
}

// Softplus is log1p(exp(δ)) exactly, with no large-argument shortcut: softplus(30) =
// 30 + log1p(e^-30) = 30 + 9.36e-14, which is 26 doubles above 30 (ulp(30) = 2^-48).
// A = 0 (a = 1), B = x = C = 1, so y = S = δ.
TEST(ReferenceClosedForm, SoftplusOfThirtyIsNotThirty) {
  Problem pr = zero_problem({0, 1}, 1, 1, 1, 1);
  pr.dt_softplus = true;
  pr.dt = {30.0f};
  pr.B = {1.0f};
  pr.C = {1.0f};
  pr.x = {1.0f};
  const ExactResult r = compute(pr, testing::mpfr_tier());
  Mp expected(30.0);
  mpfr_exp(expected.get(), expected.get(), MPFR_RNDN);
  mpfr_log1p(expected.get(), expected.get(), MPFR_RNDN);
  EXPECT_TRUE(close_to(r.y, 0, expected.get(), kExpectBits));
  EXPECT_EQ(r.delta[0], mpfr_get_d(expected.get(), MPFR_RNDN));
  EXPECT_GT(r.delta[0], 30.0 + 20 * 0x1p-48);
}

// The gate: y = y_ungated · z / (1 + e^-z). With dt = 1, A = 0, B = C = 1, x = (2, 2):
// y_ungated = 2 for both dims; z = (1, 0) gives y = (2/(1 + e^-1), 0) — the second
// exactly 0 with every operation exact, so its certified error is 0.
TEST(ReferenceClosedForm, GateWithZOneAndZero) {
  Problem pr = zero_problem({0, 1}, 1, 2, 1, 1);
  pr.dt = {1.0f};
  pr.B = {1.0f};
  pr.C = {1.0f};
  pr.x = {2.0f, 2.0f};
  pr.z = {1.0f, 0.0f};
  const ExactResult r = compute(pr, testing::mpfr_tier());
  Mp expected;
  exp_of(expected, -1);
  mpfr_add_ui(expected.get(), expected.get(), 1, MPFR_RNDN);
  mpfr_ui_div(expected.get(), 2, expected.get(), MPFR_RNDN);
  EXPECT_TRUE(close_to(r.y, 0, expected.get(), kExpectBits));
  EXPECT_EQ(r.y_ungated[0], 2.0);
  EXPECT_TRUE(mpfr_zero_p(r.y.value[1].backend().data()));
  EXPECT_EQ(r.y.certified_error[1], 0.0);
  EXPECT_EQ(r.y.magnitude[1], 0.0);
}

}  // namespace
}  // namespace ssmv::ref
