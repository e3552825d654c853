// The two tiers of the reference agree (issue 13 item 5): on realistic and adversarial
// problems (tier_problems.h: every option, every format, state positions, decode) the
// automatic tier (double-double fast pass, MPFR for the pairs it cannot settle) and the
// MPFR-only tier give the same nearest, rounded values in fp32/bf16/fp16 and magnitudes
// for every element, the same δ, decay, y_ungated and magnitude side tensors, values
// within both certified errors, and the same results for 1 and 2 threads.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "reference/reference.h"
#include "reference/tests/reference_test_util.h"
#include "reference/tests/tier_problems.h"

namespace ssmv::ref::testing {
namespace {

// sum_abs_CS is an estimate (reference.h): both tiers' within (N+1)·2^-52 of each other.
::testing::AssertionResult close_estimates(const std::vector<double>& a, const std::vector<double>& b,
                                           int64_t N) {
  for (size_t i = 0; i < a.size(); ++i) {
    if (!(std::fabs(a[i] - b[i]) <= double(N + 1) * 0x1p-52 * std::max(a[i], b[i]) + 0x1p-1000)) {
      return ::testing::AssertionFailure() << "sum_abs_CS[" << i << "] " << a[i] << " vs " << b[i];
    }
  }
  return ::testing::AssertionSuccess();
}

// Compares everything a verdict can read; returns the automatic run's counts.
TierCounts expect_equivalent(const TierCase& c) {
  Options fast = c.options, slow = c.options;
  fast.tier = Tier::automatic;
  slow.tier = Tier::mpfr_only;
  const ExactResult a = compute(c.problem, fast);
  const ExactResult b = compute(c.problem, slow);
  const int cb = fast.certified_bits;
  EXPECT_TRUE(same_verdict_outputs("y", a.y, b.y, cb)) << c.what;
  EXPECT_TRUE(same_verdict_outputs("final_state", a.final_state, b.final_state, cb)) << c.what;
  EXPECT_EQ(a.states_at.size(), b.states_at.size());
  for (size_t k = 0; k < a.states_at.size() && k < b.states_at.size(); ++k) {
    EXPECT_TRUE(same_verdict_outputs("state_at", a.states_at[k].state, b.states_at[k].state, cb)) << c.what;
  }
  EXPECT_EQ(a.delta, b.delta) << c.what;
  EXPECT_EQ(a.decay, b.decay) << c.what;
  EXPECT_EQ(a.y_ungated, b.y_ungated) << c.what;
  EXPECT_EQ(a.sum_abs_C_Sabs, b.sum_abs_C_Sabs) << c.what;
  EXPECT_EQ(a.abs_Dx, b.abs_Dx) << c.what;
  EXPECT_TRUE(close_estimates(a.sum_abs_CS, b.sum_abs_CS, c.problem.shape.N)) << c.what;
  const int64_t pairs = c.problem.shape.num_sequences() * c.problem.shape.H;
  EXPECT_EQ(a.tiers.fast_pairs + a.tiers.mpfr_pairs, pairs) << c.what;
  EXPECT_EQ(b.tiers.mpfr_pairs, pairs) << c.what;
  EXPECT_EQ(b.tiers.fast_pairs, 0) << c.what;
  int64_t elements = int64_t(a.y.size() + a.final_state.size());
  for (const auto& s : a.states_at) elements += int64_t(s.state.size());
  // Every element once; a position requested twice is handed over once and kept twice.
  EXPECT_LE(a.tiers.fast_elements + a.tiers.mpfr_elements, elements) << c.what;
  EXPECT_GE(a.tiers.fast_elements + a.tiers.mpfr_elements, int64_t(a.y.size() + a.final_state.size())) << c.what;
  return a.tiers;
}

TEST(ReferenceTierEquivalence, RealisticAndAdversarialProblems) {
  for (int adv = 0; adv < int(Adversity::count); ++adv) {
    TierCounts sum;
    for (uint64_t seed = 1; seed <= 60; ++seed) {
      const TierCounts t = expect_equivalent(tier_case(seed, Adversity(adv)));
      sum.fast_pairs += t.fast_pairs;
      sum.mpfr_pairs += t.mpfr_pairs;
      if (::testing::Test::HasFailure()) return;
    }
    std::printf("%-13s fast pairs %lld, MPFR pairs %lld\n", adversity_name(Adversity(adv)),
                (long long)sum.fast_pairs, (long long)sum.mpfr_pairs);
    // Realistic data falls back only where an exact value sits on a rounding boundary of
    // double or a format (short bf16 products, first tokens from a zero state).
    if (Adversity(adv) == Adversity::none) {
      EXPECT_LE(sum.mpfr_pairs * 20, sum.fast_pairs + sum.mpfr_pairs);
    }
  }
}

// Pairs split between the tiers give the same bits for 1, 2 and 3 worker threads.
TEST(ReferenceTierEquivalence, ThreadCountDoesNotChangeMixedTiers) {
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    TierCase c = tier_case(seed, Adversity::zeros, 20);
    c.options.threads = 1;
    const ExactResult one = compute(c.problem, c.options);
    for (int threads : {2, 3}) {
      c.options.threads = threads;
      const ExactResult r = compute(c.problem, c.options);
      EXPECT_TRUE(identical(one.y, r.y)) << c.what << " threads " << threads;
      EXPECT_TRUE(identical(one.final_state, r.final_state)) << c.what << " threads " << threads;
      EXPECT_EQ(one.tiers.mpfr_pairs, r.tiers.mpfr_pairs) << c.what;
      EXPECT_EQ(one.tiers.fast_elements, r.tiers.fast_elements) << c.what;
    }
  }
}

}  // namespace
}  // namespace ssmv::ref::testing
