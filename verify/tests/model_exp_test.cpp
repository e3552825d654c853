// verify/sharp/model_exp.h: the sharp emulation's exp is within 1 ulp of the correctly rounded
// exp (MPFR at 53 bits, round to nearest), gives the header's special values, and gives the
// same bits in a loop the compiler vectorises (every clone of SSMV_VECTOR_CLONES) as one call
// at a time.
#include <gtest/gtest.h>
#include <mpfr.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "spec/vector_clones.h"
#include "verify/sharp/model_exp.h"

namespace ssmv::sharp {
namespace {

// exp(x) correctly rounded to double (MPFR, 53 bits, with subnormal results rounded once as
// IEEE double does: mpfr_subnormalize over double's exponent range).
double mpfr_exp_double(double x) {
  const mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
  mpfr_set_emin(-1073);
  mpfr_set_emax(1024);
  mpfr_t v;
  mpfr_init2(v, 53);
  mpfr_set_d(v, x, MPFR_RNDN);
  const int t = mpfr_exp(v, v, MPFR_RNDN);
  mpfr_subnormalize(v, t, MPFR_RNDN);
  const double r = mpfr_get_d(v, MPFR_RNDN);
  mpfr_clear(v);
  mpfr_set_emin(emin);
  mpfr_set_emax(emax);
  return r;
}

// Distance in ulps between two finite non-negative doubles (their bit patterns are ordered).
int64_t ulps_apart(double a, double b) {
  const int64_t ia = int64_t(std::bit_cast<uint64_t>(a)), ib = int64_t(std::bit_cast<uint64_t>(b));
  return ia > ib ? ia - ib : ib - ia;
}

// The arguments: uniform over the whole finite range, over [−1, 1] (where p carries the result),
// and log-uniform magnitudes down to 2^-60 of both signs.
std::vector<double> arguments(int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> whole(-746.0, 710.0), unit(-1.0, 1.0), expo(-60.0, 3.0);
  std::vector<double> xs;
  xs.reserve(size_t(n));
  for (int64_t i = 0; i < n; ++i) {
    switch (i % 3) {
      case 0: xs.push_back(whole(rng)); break;
      case 1: xs.push_back(unit(rng)); break;
      default: xs.push_back((rng() & 1 ? 1.0 : -1.0) * std::exp2(expo(rng))); break;
    }
  }
  return xs;
}

TEST(ModelExp, WithinOneUlpOfTheCorrectlyRoundedExp) {
  const std::vector<double> xs = arguments(600000, 20261206);
  int64_t worst = 0, exact = 0;
  double worst_x = 0;
  for (double x : xs) {
    const double want = mpfr_exp_double(x), got = model_exp(x);
    ASSERT_TRUE(std::isfinite(got) || std::isinf(want)) << "x = " << x;
    const int64_t d = ulps_apart(got, want);
    if (d > worst) {
      worst = d;
      worst_x = x;
    }
    exact += d == 0;
  }
  EXPECT_LE(worst, 1) << "worst at x = " << std::hexfloat << worst_x;
  // Not a tolerance: a record of how often the last bit is the correctly rounded one.
  std::printf("model_exp: %lld of %zu arguments correctly rounded, worst %lld ulp\n", (long long)exact, xs.size(),
              (long long)worst);
}

TEST(ModelExp, EdgesOfTheRange) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(model_exp(0.0), 1.0);
  EXPECT_EQ(model_exp(-0.0), 1.0);
  EXPECT_EQ(model_exp(kInf), kInf);
  EXPECT_EQ(model_exp(-kInf), 0.0);
  EXPECT_TRUE(std::isnan(model_exp(std::numeric_limits<double>::quiet_NaN())));
  // The largest argument with a finite result, ln(DBL_MAX) rounded down, and the next double.
  const double x_max = 0x1.62e42fefa39efp9;
  EXPECT_TRUE(std::isfinite(model_exp(x_max)));
  EXPECT_LE(ulps_apart(model_exp(x_max), mpfr_exp_double(x_max)), 1);
  EXPECT_EQ(model_exp(std::nextafter(x_max, kInf)), kInf);
  // Subnormal results and the smallest one; below ln(2^-1075) the result is +0.
  for (double x : {-708.5, -710.0, -720.0, -740.0, -744.4, -745.1}) {
    EXPECT_LE(ulps_apart(model_exp(x), mpfr_exp_double(x)), 1) << "x = " << x;
  }
  const double x_min = -0x1.74910d52d3051p9;
  EXPECT_EQ(model_exp(std::nextafter(x_min, -kInf)), 0.0);
  EXPECT_EQ(model_exp(-800.0), 0.0);
}

// model_exp over an array, compiled for every clone target: the loop vectorises where it can.
SSMV_VECTOR_CLONES void exp_array(const double* __restrict x, double* __restrict y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = model_exp(x[i]);
}

// One call at a time, never vectorised.
__attribute__((noinline)) double exp_one(double x) { return model_exp(x); }

TEST(ModelExp, VectorisedLoopGivesTheSameBits) {
  std::vector<double> xs = arguments(100000, 7);
  for (double x : {0.0, -0.0, 709.9, -745.2, -1000.0, 1000.0}) xs.push_back(x);
  xs.push_back(std::numeric_limits<double>::infinity());
  xs.push_back(-std::numeric_limits<double>::infinity());
  std::vector<double> ys(xs.size());
  exp_array(xs.data(), ys.data(), int64_t(xs.size()));
  for (size_t i = 0; i < xs.size(); ++i) {
    ASSERT_EQ(std::bit_cast<uint64_t>(ys[i]), std::bit_cast<uint64_t>(exp_one(xs[i]))) << "x = " << xs[i];
  }
}

}  // namespace
}  // namespace ssmv::sharp
