// fast_math.h against MPFR: every bf16 argument in each range plus a random sample
// (the full 10^7-argument measurement is ssmv_fast_math_ulp), asserting the maximum
// errors stated in fast_math.h; and the special values.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "fast/common/fast_math.h"
#include "fast/common/tests/fast_math_ulp.h"

namespace ssmv::fm_test {
namespace {

constexpr int64_t kSample = 100000;  // random arguments per range (~1 s in all)
constexpr uint64_t kSeed = 0x5eed0003u;

void expect_within(Function f, float lo, float hi, double stated_max_ulp) {
  const UlpStats s = measure(f, arguments(lo, hi, kSample, kSeed));
  ASSERT_GT(s.count, kSample);  // the bf16 arguments were there too
  EXPECT_LE(s.max_ulp, stated_max_ulp)
      << function_name(f) << " over [" << lo << ", " << hi << "]: worst at x = " << std::hexfloat
      << s.worst_arg;
  EXPECT_GT(s.max_ulp, 0.0);  // not vacuous: the measurement saw rounding errors
}

// The bounds below are the first comment lines of fast_math.h.
TEST(FastMath, ExpWithinStatedUlps) { expect_within(Function::exp, -104.0f, 88.72f, 0.9292); }
TEST(FastMath, Log1pWithinStatedUlps) { expect_within(Function::log1p, 0.0f, 536870912.0f, 0.8101); }
TEST(FastMath, SoftplusWithinStatedUlps) { expect_within(Function::softplus, -104.0f, 20.0f, 1.5247); }
TEST(FastMath, SigmoidWithinStatedUlps) { expect_within(Function::sigmoid, -87.0f, 110.0f, 2.4098); }
TEST(FastMath, SiluWithinStatedUlps) { expect_within(Function::silu, -87.0f, 110.0f, 2.7173); }
TEST(FastMath, TanhWithinStatedUlps) { expect_within(Function::tanh, -3.0e38f, 3.0e38f, 1.5463); }
TEST(FastMath, CosWithinStatedUlpsOnTheStepsAngles) { expect_within(Function::cos, -8.0f, 8.0f, 1.4237); }
TEST(FastMath, SinWithinStatedUlpsOnTheStepsAngles) { expect_within(Function::sin, -8.0f, 8.0f, 1.4195); }

// Over the whole domain [-2^21, 2^21] the stated absolute errors (ULPs near the zeros of large
// arguments say little), and the stated ULPs on the sample.
TEST(FastMath, CosSinWithinStatedAbsoluteErrorsOnTheirDomain) {
  const auto args = arguments(-2097152.0f, 2097152.0f, kSample, kSeed);
  const UlpStats c = measure(Function::cos, args), s = measure(Function::sin, args);
  EXPECT_LE(c.max_abs, 0x1.011p-24);
  EXPECT_LE(s.max_abs, 0x1.0e99p-24);
  EXPECT_LE(c.max_ulp, 1.8067);
  EXPECT_LE(s.max_ulp, 1.7862);
  EXPECT_GT(c.max_abs, 0.0);
}

TEST(FastMath, SiluTailsAsStated) {
  EXPECT_LT(measure(Function::silu, arguments(-1e30f, -87.0f, 1000, kSeed)).max_abs, 2.61e-37);
  EXPECT_EQ(measure(Function::silu, arguments(110.0f, 1e30f, 1000, kSeed)).max_ulp, 0.0);
}

TEST(FastMath, SoftplusShortcutIsIdentityAbove20) {
  EXPECT_EQ(fm::softplus(20.5f), 20.5f);
  EXPECT_EQ(fm::softplus(1e30f), 1e30f);
  const UlpStats s = measure(Function::softplus, arguments(20.0f, 1e30f, 1000, kSeed));
  EXPECT_LE(s.max_abs, std::exp(-20.0));  // log1p(e^-x) < e^-x ≤ e^-20
}

TEST(FastMath, SigmoidBelowMinus87HasAbsoluteErrorBelowMinNormal) {
  const UlpStats s = measure(Function::sigmoid, arguments(-1e30f, -87.0f, 1000, kSeed));
  EXPECT_LT(s.max_abs, 0x1p-128);
}

TEST(FastMath, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(fm::exp(0.0f), 1.0f);
  EXPECT_EQ(fm::exp(-0.0f), 1.0f);
  EXPECT_EQ(fm::exp(-inf), 0.0f);
  EXPECT_EQ(fm::exp(inf), inf);
  EXPECT_EQ(fm::exp(89.0f), inf);
  EXPECT_EQ(fm::exp(-104.0f), 0.0f);
  EXPECT_GT(fm::exp(-103.0f), 0.0f);  // e^-103 ≈ 1.9·2^-149: subnormal, not flushed
  EXPECT_LT(fm::exp(-103.0f), 0x1p-126f);
  EXPECT_TRUE(std::isnan(fm::exp(nan)));
  EXPECT_EQ(fm::log1p(0.0f), 0.0f);
  EXPECT_EQ(fm::log1p(-1.0f), -inf);
  EXPECT_TRUE(std::isnan(fm::log1p(-2.0f)));
  EXPECT_EQ(fm::log1p(inf), inf);
  EXPECT_EQ(fm::log1p(0x1p-140f), 0x1p-140f);
  EXPECT_EQ(fm::sigmoid(0.0f), 0.5f);
  EXPECT_EQ(fm::sigmoid(inf), 1.0f);
  EXPECT_EQ(fm::sigmoid(-inf), 0.0f);
  EXPECT_EQ(fm::softplus(-inf), 0.0f);
  EXPECT_EQ(fm::silu(0.0f), 0.0f);
  EXPECT_EQ(fm::silu(inf), inf);
  EXPECT_EQ(fm::bits_of(fm::tanh(-0.0f)), fm::bits_of(-0.0f));
  EXPECT_EQ(fm::tanh(0x1p-140f), 0x1p-140f);
  EXPECT_EQ(fm::tanh(inf), 1.0f);
  EXPECT_EQ(fm::tanh(-inf), -1.0f);
  EXPECT_EQ(fm::tanh(9.1f), 1.0f);
  EXPECT_TRUE(std::isnan(fm::tanh(nan)));
  EXPECT_EQ(fm::cos(0.0f), 1.0f);
  EXPECT_EQ(fm::sin(0.0f), 0.0f);
  EXPECT_EQ(fm::bits_of(fm::sin(-0.0f)), fm::bits_of(-0.0f));
  EXPECT_EQ(fm::sin(0x1p-140f), 0x1p-140f);
  EXPECT_TRUE(std::isnan(fm::cos(inf)));
  EXPECT_TRUE(std::isnan(fm::sin(-inf)));
  EXPECT_TRUE(std::isnan(fm::cos(nan)));
  EXPECT_TRUE(std::isnan(fm::sin(0x1p22f)));  // outside the domain [-2^21, 2^21]
  EXPECT_FALSE(std::isnan(fm::sin(0x1p21f)));
}

}  // namespace
}  // namespace ssmv::fm_test
