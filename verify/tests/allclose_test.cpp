// The fp32 reference and the allclose judge of verify/allclose/ (today's kernel tests'
// practice, which `ssmv bounds` and the planted-bug side by side compare with the contracts).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "spec/realistic_problem.h"
#include "verify/allclose/allclose.h"
#include "verify/allclose/fp32_reference.h"

namespace ssmv::verify {
namespace {

// One token, one head, P = 1, N = 2: the recurrence by hand in float, in the documented order.
TEST(Fp32Reference, OneTokenIsTheRecurrenceInFloat) {
  Problem p;
  p.shape = Shape{{0, 1}, 1, 1, 2, 1};
  p.formats = Formats{Format::fp32, Format::fp32, Format::fp32};
  p.dt_softplus = true;
  p.x = {1.5f};
  p.dt = {0.25f};
  p.dt_bias = {-1.0f};
  p.A = {-2.0f};
  p.B = {0.5f, -3.0f};
  p.C = {2.0f, 0.125f};
  p.D = {0.75f};
  p.z = {0.5f};
  p.initial_state = {1.0f, -1.0f};
  const Fp32Reference r = fp32_reference(p);
  const float delta = std::log1p(std::exp(0.25f + -1.0f));
  const float dA = std::exp(delta * -2.0f);
  const float s0 = 1.0f * dA + (delta * 0.5f) * 1.5f;
  const float s1 = -1.0f * dA + (delta * -3.0f) * 1.5f;
  float y = 0.0f;
  y = y + s0 * 2.0f;
  y = y + s1 * 0.125f;
  y = y + 1.5f * 0.75f;
  y = y * (0.5f / (1.0f + std::exp(-0.5f)));
  ASSERT_EQ(r.y.size(), 1u);
  EXPECT_EQ(r.y[0], double(y));
  EXPECT_EQ(r.final_state, (std::vector<double>{double(s0), double(s1)}));
}

// The decode form reads and writes the pool where its requests say; its y is the prefill
// form's from the same starting states.
TEST(Fp32Reference, DecodeFormMatchesThePrefillForm) {
  const Shape s{{0, 3, 5}, 2, 4, 8, 1};
  const Problem p = realistic_problem(s, Formats{Format::bf16, Format::fp32, Format::bf16}, 7);
  const Fp32Reference prefill = fp32_reference(p);
  const int64_t per = s.H * s.P * s.N;
  DecodeProblem d;
  d.problem = p;
  d.problem.initial_state.clear();
  d.slots = 3;
  d.state_pool.assign(size_t(3 * per), 0.5f);
  std::copy(p.initial_state.begin(), p.initial_state.begin() + per, d.state_pool.begin() + 2 * per);
  std::copy(p.initial_state.begin() + per, p.initial_state.end(), d.state_pool.begin());
  d.slot_in = {2, 0};
  const Fp32Reference dec = fp32_reference(d);
  EXPECT_EQ(dec.y, prefill.y);
  EXPECT_EQ(dec.final_state, prefill.final_state);
  ASSERT_EQ(dec.state_pool.size(), size_t(3 * per));
  for (int64_t i = 0; i < per; ++i) {
    EXPECT_EQ(dec.state_pool[2 * per + i], prefill.final_state[i]);
    EXPECT_EQ(dec.state_pool[i], prefill.final_state[per + i]);
    EXPECT_EQ(dec.state_pool[per + i], 0.5);  // slot 1: nobody's
  }
}

TEST(Allclose, CountsTorchsTestPerElement) {
  const std::vector<double> ref = {1.0, -2.0, 0.0, 100.0};
  const std::vector<double> kernel = {1.01, -2.0, 0.05, 101.0};
  // |d| = 0.01, 0, 0.05, 1; allowed atol + rtol·|ref| with rtol 1e-2, atol 5e-2: 0.06, 0.07, 0.05, 1.05.
  EXPECT_EQ(allclose_violations(kernel, ref, 1e-2, 5e-2), 0);
  // With atol 1e-2 the allowed are 0.02, 0.03, 0.01, 1.01: only the element at ref 0 fails.
  EXPECT_EQ(allclose_violations(kernel, ref, 1e-2, 1e-2), 1);
  EXPECT_EQ(allclose_violations(kernel, ref, 0, 0), 3);
  const std::vector<double> nan = {std::numeric_limits<double>::quiet_NaN(), -2.0, 0.0, 100.0};
  EXPECT_EQ(allclose_violations(nan, ref, 1, 1), 1);
  EXPECT_THROW(allclose_violations(std::vector<double>{1.0}, ref, 0, 0), std::invalid_argument);
}

// The frontier's values pass, and anything smaller fails: the smallest pair, not a safe one.
TEST(Allclose, SmallestToleranceIsTightAndPasses) {
  const Problem p = realistic_problem(Shape{{0, 40}, 2, 8, 16, 1}, Formats{Format::bf16, Format::fp32, Format::bf16}, 3);
  const Fp32Reference r = fp32_reference(p);
  std::vector<double> kernel(r.y.size());
  for (size_t i = 0; i < kernel.size(); ++i) kernel[i] = round_value(Format::bf16, r.y[i]);  // a bf16 kernel
  const std::vector<double> d = deviations(kernel, r.y);
  for (const double rtol : {0.0, 3e-4, 1e-3, 1e-2}) {
    const double atol = smallest_atol(d, r.y, rtol);
    EXPECT_EQ(tolerance_violations(d, r.y, rtol, atol), 0) << rtol;
    if (atol > 0) {
      EXPECT_GT(tolerance_violations(d, r.y, rtol, atol * (1 - 1e-9)), 0) << rtol;
    }
  }
  const double rtol = smallest_rtol(d, r.y, 0);
  EXPECT_EQ(tolerance_violations(d, r.y, rtol, 0), 0);
  EXPECT_GT(tolerance_violations(d, r.y, rtol * (1 - 1e-9), 0), 0);
  EXPECT_LE(rtol, 0x1p-8);  // rounding to bf16: at most its unit roundoff, 2^-8 relative
  // A deviation at ref = 0 needs an atol: no rtol alone passes it.
  EXPECT_EQ(smallest_rtol(std::vector<double>{0.1}, std::vector<double>{0.0}, 0), std::numeric_limits<double>::infinity());
  EXPECT_EQ(smallest_atol(std::vector<double>{std::nan("")}, std::vector<double>{1.0}, 0),
            std::numeric_limits<double>::infinity());
}

TEST(Allclose, MambaSsmTolerances) {
  EXPECT_EQ(mamba_ssm_tolerance(Format::bf16).rtol, 1e-2);
  EXPECT_EQ(mamba_ssm_tolerance(Format::bf16).atol, 5e-2);
  EXPECT_EQ(mamba_ssm_tolerance(Format::fp32).rtol, 3e-4);
  EXPECT_EQ(mamba_ssm_tolerance(Format::fp32).atol, 1e-3);
}

}  // namespace
}  // namespace ssmv::verify
