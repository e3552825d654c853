// Hand-derived cases of the Mamba-3 SISO recurrence whose values are short expressions in
// e, π and tanh; expected values are computed here at 400 bits with MPFR directly. The
// reference returns its check run (191 bits) as a double-double, so it must match to 100 bits.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "reference/mamba3/tests/test_problem.h"
#include "reference/round.h"

namespace ssmv::ref::mamba3 {
namespace {

using testing::Mp;
using testing::near;
using testing::zero_problem;

constexpr int kExpectBits = 100;

// T = 1, P = 1, N = 2, R = 1, no initial state, angle rate 0 (θ = 0: no turn).
// trap = 0 gives λ = σ(0) = 1/2; dt = 1/2 gives γ = λ·dt = 1/4 (β multiplies the zero
// b_prev·x_prev). b = B + B_bias = (1 + 1/2, 2), x = 2:
//   S = γ·b·x = (3/4, 1);  c = C = (1, −1);  y = 3/4 − 1 + D·x = −1/4 + 1/2·2 = 3/4.
// Every step is exact, so every value is exact: hi = 3/4, lo = 0.
TEST(Mamba3ClosedForm, OneTokenZeroAngleIsExact) {
  Problem pr = zero_problem({0, 1}, 1, 1, 2, 1, 1);
  pr.dt = {0.5f};
  pr.adt = {-1.0f};
  pr.B = {1.0f, 2.0f};
  pr.B_bias = {0.5f, 0.0f};
  pr.C = {1.0f, -1.0f};
  pr.x = {2.0f};
  pr.D = {0.5f};
  const Result r = compute(pr);
  EXPECT_EQ(r.y.hi[0], 0.75);
  EXPECT_EQ(r.y.lo[0], 0.0);
  EXPECT_EQ(r.y.fp32[0], 0x3f400000u);  // 0.75
  EXPECT_EQ(r.state.hi[0], 0.75);
  EXPECT_EQ(r.state.hi[1], 1.0);
  EXPECT_EQ(r.B_prev.hi[0], 1.5);
  EXPECT_EQ(r.B_prev.hi[1], 2.0);
  EXPECT_EQ(r.x_prev.hi[0], 2.0);
  EXPECT_EQ(r.angle_state.hi[0], 0.0);
  // Magnitude of y: Σ|c|·|S| + |D·x| = 3/4 + 1 + 1 = 11/4 (the cancellation shows).
  EXPECT_EQ(r.y.magnitude[0], 2.75);
}

// T = 1 from a four-part state: S0 = (4, −2), b_prev = (1, 3), x_prev = 2, θ0 = 0,
// trap = 0 (λ = 1/2), dt = 1, adt = −1: α = e^-1, β = (1 − λ)·dt·α = e^-1/2, γ = 1/2.
// x = 1, b = (2, 0), c = (1, 1), z = 2 (gate z·σ(z) = 2/(1 + e^-2)):
//   S = e^-1·S0 + (e^-1/2)·b_prev·x_prev + (1/2)·b·x
//     = (4/e + 1/e + 1, −2/e + 3/e) = (5/e + 1, 1/e)
//   y = (S_0 + S_1 + D·x)·gate with D = 0: (6/e + 1)·2/(1 + e^-2).
TEST(Mamba3ClosedForm, TrapezoidTwoTermsFromAFourPartState) {
  Problem pr = zero_problem({0, 1}, 1, 1, 2, 1, 1);
  pr.dt = {1.0f};
  pr.adt = {-1.0f};
  pr.B = {2.0f, 0.0f};
  pr.C = {1.0f, 1.0f};
  pr.x = {1.0f};
  pr.z = {2.0f};
  pr.initial.angle = {0.0f};
  pr.initial.S = {4.0f, -2.0f};
  pr.initial.B_prev = {1.0f, 3.0f};
  pr.initial.x_prev = {2.0f};
  const Result r = compute(pr);

  Mp inv_e(-1.0), s0, s1, y, gate(-2.0);
  mpfr_exp(inv_e.get(), inv_e.get(), MPFR_RNDN);
  mpfr_mul_ui(s0.get(), inv_e.get(), 5, MPFR_RNDN);
  mpfr_add_ui(s0.get(), s0.get(), 1, MPFR_RNDN);  // 5/e + 1
  mpfr_set(s1.get(), inv_e.get(), MPFR_RNDN);     // 1/e
  mpfr_exp(gate.get(), gate.get(), MPFR_RNDN);
  mpfr_add_ui(gate.get(), gate.get(), 1, MPFR_RNDN);
  mpfr_ui_div(gate.get(), 2, gate.get(), MPFR_RNDN);  // 2/(1 + e^-2)
  mpfr_add(y.get(), s0.get(), s1.get(), MPFR_RNDN);
  mpfr_mul(y.get(), y.get(), gate.get(), MPFR_RNDN);
  EXPECT_TRUE(near(r.state, 0, s0.get(), kExpectBits));
  EXPECT_TRUE(near(r.state, 1, s1.get(), kExpectBits));
  EXPECT_TRUE(near(r.y, 0, y.get(), kExpectBits));
  EXPECT_EQ(r.y.bf16[0], round_nearest_even(Format::bf16, y.get()));
  // The carried b and x are this token's.
  EXPECT_EQ(r.B_prev.hi[0], 2.0);
  EXPECT_EQ(r.x_prev.hi[0], 1.0);
}

// Constant input over T = 5 tokens, zero angle, no initial state: trap = 0, dt = 1 give
// γ = 1/2 and β = α/2 with α = e^-1; b = (1, 1), x = 1, c = (1, 1). Each S element follows
//   S_0 = γ,  S_t = α·S_{t−1} + β + γ   (t >= 1)
// a geometric series: S_t = γ·Σ_{i<=t} α^i + β·Σ_{i<t} α^i
//                         = (1/2)·(1 + α − 2α^{t+1}) / (1 − α),   and y_t = 2·S_t.
TEST(Mamba3ClosedForm, ConstantInputIsAGeometricSeries) {
  Problem pr = zero_problem({0, 5}, 1, 1, 2, 1, 1);
  for (int t = 0; t < 5; ++t) {
    pr.dt[t] = 1.0f;
    pr.adt[t] = -1.0f;
    pr.x[t] = 1.0f;
    pr.B[2 * t] = pr.B[2 * t + 1] = 1.0f;
    pr.C[2 * t] = pr.C[2 * t + 1] = 1.0f;
  }
  const Result r = compute(pr);
  Mp alpha(-1.0), power, y;
  mpfr_exp(alpha.get(), alpha.get(), MPFR_RNDN);
  mpfr_set(power.get(), alpha.get(), MPFR_RNDN);
  for (int t = 0; t < 5; ++t) {
    if (t > 0) mpfr_mul(power.get(), power.get(), alpha.get(), MPFR_RNDN);  // α^{t+1}
    mpfr_mul_2ui(y.get(), power.get(), 1, MPFR_RNDN);
    mpfr_ui_sub(y.get(), 1, y.get(), MPFR_RNDN);
    mpfr_add(y.get(), y.get(), alpha.get(), MPFR_RNDN);  // 1 + α − 2α^{t+1}
    Mp one_minus_alpha(1.0);
    mpfr_sub(one_minus_alpha.get(), one_minus_alpha.get(), alpha.get(), MPFR_RNDN);
    mpfr_div(y.get(), y.get(), one_minus_alpha.get(), MPFR_RNDN);  // 2·S_t
    EXPECT_TRUE(near(r.y, size_t(t), y.get(), kExpectBits)) << "token " << t;
  }
}

// The turn: T = 2, N = 4, R = 2, dt = 1, trap = 0, adt = 0 (α = 1, β = γ = 1/2).
// Token 0: angle rates 0 (θ = 0), b_0 = (1, 0, 1, 0), x_0 = 1; token 1: x_1 = 0 (no γ
// term), rates (1/2, −1/2), so θ = π·tanh(1/2)·(1, −1). Then S_1 = α·γ·b_0 + β·b_0 = b_0 and
//   c_1 = Rot(θ)(1, 0, 0, 1) = (cos θ_0, sin θ_0, −sin θ_1, cos θ_1),
//   y_1 = c_1·b_0 = cos θ_0 − sin θ_1 = cos(π·tanh(1/2)) + sin(π·tanh(1/2)).
// The returned angle state reduces θ_1 < 0 to 2π − π·tanh(1/2).
TEST(Mamba3ClosedForm, RotationTurnsEachPairByItsAngle) {
  Problem pr = zero_problem({0, 2}, 1, 1, 4, 1, 2);
  pr.dt = {1.0f, 1.0f};
  pr.x = {1.0f, 0.0f};
  pr.B = {1.0f, 0.0f, 1.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
  pr.C = {0.0f, 0.0f, 0.0f, 0.0f, 1.0f, 0.0f, 0.0f, 1.0f};
  pr.angles = {0.0f, 0.0f, 0.5f, -0.5f};
  const Result r = compute(pr);

  Mp theta(0.5), c, s, y, two_pi;
  mpfr_tanh(theta.get(), theta.get(), MPFR_RNDN);
  mpfr_const_pi(two_pi.get(), MPFR_RNDN);
  mpfr_mul(theta.get(), theta.get(), two_pi.get(), MPFR_RNDN);  // π·tanh(1/2)
  mpfr_mul_2ui(two_pi.get(), two_pi.get(), 1, MPFR_RNDN);
  mpfr_sin_cos(s.get(), c.get(), theta.get(), MPFR_RNDN);
  mpfr_add(y.get(), c.get(), s.get(), MPFR_RNDN);
  EXPECT_TRUE(near(r.y, 1, y.get(), kExpectBits));
  EXPECT_TRUE(near(r.angle_state, 0, theta.get(), kExpectBits));
  mpfr_sub(y.get(), two_pi.get(), theta.get(), MPFR_RNDN);
  EXPECT_TRUE(near(r.angle_state, 1, y.get(), kExpectBits));
  // Token 0 alone: θ = 0, c_0 = 0, so y_0 = 0 exactly.
  EXPECT_EQ(r.y.hi[0], 0.0);
}

// One token from a zero state gives y = γ·x·(c·b), and turning both by one θ keeps c·b:
// the angle must not change y (upstream's forward kernel relies on it: it adds the diagonal
// term from the unrotated q·k, mamba3_siso_fwd_kernel's qk_dot). With b = (1, 2), c = (3, −1),
// γ = 1/4 (trap 0, dt 1/2), x = 1: y = (3 − 2)/4 = 1/4 exactly for any angle rate.
TEST(Mamba3ClosedForm, OneTokenFromZeroIsBlindToTheAngle) {
  for (float rate : {0.0f, 0.75f, -3.0f}) {
    Problem pr = zero_problem({0, 1}, 1, 1, 2, 1, 1);
    pr.dt = {0.5f};
    pr.x = {1.0f};
    pr.B = {1.0f, 2.0f};
    pr.C = {3.0f, -1.0f};
    pr.angles = {rate};
    const Result r = compute(pr);
    Mp quarter(0.25);
    EXPECT_TRUE(near(r.y, 0, quarter.get(), kExpectBits)) << "rate " << rate;
    EXPECT_EQ(r.y.fp32[0], 0x3e800000u) << "rate " << rate;  // 0.25
  }
}

// Too few working bits for the certificate: 40-bit and 104-bit runs of an inexact value
// differ by about 2^-40 of it, far beyond the 2^-64 required.
TEST(Mamba3ClosedForm, RefusesWhenTheRunsDisagree) {
  Problem pr = zero_problem({0, 1}, 1, 1, 2, 1, 1);
  pr.dt = {1.0f};
  pr.adt = {-1.0f};
  pr.x = {1.0f};
  pr.B = {1.0f, 0.0f};
  pr.C = {1.0f, 0.0f};
  pr.trap = {1.0f};  // λ = σ(1): inexact
  Options o;
  o.precision_bits = 40;
  try {
    compute(pr, o);
    ADD_FAILURE() << "a 40-bit run was certified to 2^-64";
  } catch (const CertificationError& e) {
    EXPECT_NE(std::string(e.what()).find("y[0] differs between the runs"), std::string::npos) << e.what();
  }
  o.precision_bits = 127;
  EXPECT_NO_THROW(compute(pr, o));
}

}  // namespace
}  // namespace ssmv::ref::mamba3
