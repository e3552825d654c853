// Helpers for the reference tests: problems built from explicit values, exact MPFR
// comparisons of results.
#pragma once

#include <gtest/gtest.h>
#include <mpfr.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "reference/reference.h"
#include "spec/format.h"
#include "spec/problem.h"
#include "spec/realistic_problem.h"

namespace ssmv::ref::testing {

// Options of the MPFR tier only, for tests of what that tier promises beyond the
// automatic tier's contract (values to 120 bits, certified_error 0 for exact arithmetic,
// refusal at a too low precision); reference_tier_equivalence_test ties the tiers together.
inline Options mpfr_tier(Options o = {}) {
  o.tier = Tier::mpfr_only;
  return o;
}

// A problem of one sequence of T tokens with every tensor zero (fp32 formats), A = 0.
inline Problem zero_problem(std::vector<int64_t> cu, int64_t H, int64_t P, int64_t N, int64_t G) {
  Problem pr;
  pr.shape.cu_seqlens = std::move(cu);
  pr.shape.H = H;
  pr.shape.P = P;
  pr.shape.N = N;
  pr.shape.G = G;
  pr.formats = {Format::fp32, Format::fp32, Format::fp32};
  const int64_t T = pr.shape.num_tokens();
  pr.x.assign(T * H * P, 0.0f);
  pr.dt.assign(T * H, 0.0f);
  pr.A.assign(H, 0.0f);
  pr.B.assign(T * G * N, 0.0f);
  pr.C.assign(T * G * N, 0.0f);
  return pr;
}

// A realistic problem (spec/realistic_problem.h): bf16 inputs and outputs, fp32 states.
inline Problem random_problem(std::vector<int64_t> cu, int64_t H, int64_t P, int64_t N, int64_t G,
                              uint64_t seed, bool with_initial_state) {
  RealisticOptions o;
  o.initial_state = with_initial_state;
  return realistic_problem(Shape{std::move(cu), H, P, N, G}, Formats{Format::bf16, Format::fp32, Format::bf16},
                           seed, o);
}

// Bit-for-bit equality of element a[i] and b[j] (value, nearest double, magnitude).
inline ::testing::AssertionResult same_element(const ExactValues& a, size_t i, const ExactValues& b,
                                                size_t j) {
  if (!mpfr_equal_p(a.value[i].backend().data(), b.value[j].backend().data()) ||
      mpfr_signbit(a.value[i].backend().data()) != mpfr_signbit(b.value[j].backend().data())) {
    return ::testing::AssertionFailure() << "values differ at " << i << " / " << j << ": "
                                         << std::hexfloat << a.nearest[i] << " vs " << b.nearest[j];
  }
  if (a.nearest[i] != b.nearest[j] || a.magnitude[i] != b.magnitude[j]) {
    return ::testing::AssertionFailure() << "nearest or magnitude differ at " << i << " / " << j << ": "
                                         << std::hexfloat << a.magnitude[i] << " vs " << b.magnitude[j];
  }
  return ::testing::AssertionSuccess();
}

// Every element of a and b identical, certified_error included.
inline ::testing::AssertionResult identical(const ExactValues& a, const ExactValues& b) {
  if (a.size() != b.size() || a.value.size() != b.value.size()) {
    return ::testing::AssertionFailure() << "sizes differ: " << a.size() << " vs " << b.size();
  }
  for (size_t i = 0; i < a.size(); ++i) {
    auto r = same_element(a, i, b, i);
    if (!r) return r;
    if (a.certified_error[i] != b.certified_error[i]) {
      return ::testing::AssertionFailure() << "certified_error differs at " << i;
    }
  }
  return ::testing::AssertionSuccess();
}

// Every field of two results identical.
inline void expect_identical(const ExactResult& a, const ExactResult& b) {
  EXPECT_TRUE(identical(a.y, b.y));
  EXPECT_TRUE(identical(a.final_state, b.final_state));
  EXPECT_EQ(a.sum_abs_CS, b.sum_abs_CS);
  EXPECT_EQ(a.sum_abs_C_Sabs, b.sum_abs_C_Sabs);
  EXPECT_EQ(a.abs_Dx, b.abs_Dx);
  EXPECT_EQ(a.y_ungated, b.y_ungated);
  EXPECT_EQ(a.delta, b.delta);
  EXPECT_EQ(a.decay, b.decay);
  ASSERT_EQ(a.states_at.size(), b.states_at.size());
  for (size_t k = 0; k < a.states_at.size(); ++k) {
    EXPECT_EQ(a.states_at[k].position, b.states_at[k].position);
    EXPECT_TRUE(identical(a.states_at[k].state, b.states_at[k].state));
  }
}

// An MPFR number for expected values computed independently in a test.
class Mp {
 public:
  explicit Mp(double v = 0, mpfr_prec_t prec = 400) {
    mpfr_init2(v_, prec);
    mpfr_set_d(v_, v, MPFR_RNDN);
  }
  ~Mp() { mpfr_clear(v_); }
  Mp(const Mp&) = delete;
  Mp& operator=(const Mp&) = delete;
  mpfr_ptr get() { return v_; }
  mpfr_srcptr get() const { return v_; }

 private:
  mpfr_t v_;
};

// |value[i] − expected| <= 2^-bits · |expected|, computed in MPFR.
inline ::testing::AssertionResult close_to(const ExactValues& v, size_t i, mpfr_srcptr expected, int bits) {
  Mp diff;
  mpfr_sub(diff.get(), v.value[i].backend().data(), expected, MPFR_RNDN);
  mpfr_abs(diff.get(), diff.get(), MPFR_RNDN);
  Mp allow;
  mpfr_abs(allow.get(), expected, MPFR_RNDN);
  mpfr_mul_2si(allow.get(), allow.get(), -bits, MPFR_RNDN);
  if (mpfr_cmp(diff.get(), allow.get()) <= 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "element " << i << ": " << std::hexfloat << v.nearest[i]
                                       << " vs expected " << mpfr_get_d(expected, MPFR_RNDN)
                                       << ", |diff| = " << mpfr_get_d(diff.get(), MPFR_RNDN);
}

// |v[i] − expected| <= v.certified_error[i] + extra + 2^-300·|expected| (expected computed
// at 400 bits or more): the certificate of v[i] holds against an independent computation.
inline ::testing::AssertionResult within_certified(const ExactValues& v, size_t i, mpfr_srcptr expected,
                                                   double extra) {
  Mp diff(0, 600);
  mpfr_sub(diff.get(), v.value[i].backend().data(), expected, MPFR_RNDA);
  mpfr_abs(diff.get(), diff.get(), MPFR_RNDN);
  Mp allow(v.certified_error[i], 600);
  mpfr_add_d(allow.get(), allow.get(), extra, MPFR_RNDN);
  Mp rel(0, 600);
  mpfr_abs(rel.get(), expected, MPFR_RNDN);
  mpfr_mul_2si(rel.get(), rel.get(), -300, MPFR_RNDN);
  mpfr_add(allow.get(), allow.get(), rel.get(), MPFR_RNDN);
  if (mpfr_cmp(diff.get(), allow.get()) <= 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "element " << i << ": " << std::hexfloat << v.nearest[i]
                                       << " vs expected " << mpfr_get_d(expected, MPFR_RNDN) << ", |diff| = "
                                       << mpfr_get_d(diff.get(), MPFR_RNDN) << " > certified error "
                                       << v.certified_error[i] << " + " << extra;
}

}  // namespace ssmv::ref::testing
