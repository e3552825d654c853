// verify::judge, one element (verify/judge/verdict.h): the four verdicts, the error and the
// bound usage, and an exact value beyond the format's range (correctly rounded to ±Inf).
#include <gtest/gtest.h>

#include <cmath>

#include "spec/format.h"
#include "verify/judge/verdict.h"

namespace ssmv::verify {
namespace {

TEST(Verdict, ExactElementUsesItsRoundingError) {
  // bf16: 1 + 2^-9 rounds to 1 (ties to even); error 2^-9, bound 2^-8 → usage 1/2.
  const double exact = 1 + 0x1p-9;
  const ElementJudgement j = judge(Format::bf16, round_nearest_even(Format::bf16, 1.0),
                                   round_nearest_even(Format::bf16, exact), exact, 0, 0x1p-8);
  EXPECT_EQ(j.verdict, Verdict::exact);
  EXPECT_EQ(j.error, 0x1p-9);
  EXPECT_EQ(j.bound_usage, 0.5);
}

TEST(Verdict, WithinAndBeyondTheBound) {
  const double exact = 1.0;
  const Bits one_ulp_up = round_nearest_even(Format::bf16, 1 + 0x1p-7);
  const ElementJudgement within = judge(Format::bf16, one_ulp_up, round_nearest_even(Format::bf16, exact), exact, 0, 0x1p-6);
  EXPECT_EQ(within.verdict, Verdict::within_contract);
  EXPECT_NEAR(within.bound_usage, 0.5, 1e-12);
  const ElementJudgement beyond = judge(Format::bf16, one_ulp_up, round_nearest_even(Format::bf16, exact), exact, 0, 0x1p-8);
  EXPECT_EQ(beyond.verdict, Verdict::violation);
  EXPECT_NEAR(beyond.bound_usage, 2.0, 1e-12);
}

TEST(Verdict, NanIsInvalid) {
  const ElementJudgement j = judge(Format::fp16, 0x7e00, round_nearest_even(Format::fp16, 1.0), 1.0, 0, 1.0);
  EXPECT_EQ(j.verdict, Verdict::invalid);
  EXPECT_TRUE(std::isinf(j.bound_usage));
}

// An fp16 state whose exact value is 1e6 (above fp16's largest finite 65504) is correctly
// rounded to +Inf. A kernel storing +Inf is EXACT; its distance to 1e6 is infinite, but it
// uses none of the bound (before: usage ∞ on a passing element, which made every tensor's
// max_bound_usage ∞; issue 18's campaign found 1591 such SsuContract.StateFp16 cases).
TEST(Verdict, ExactOverflowToInfUsesNoBound) {
  const double exact = 1e6;
  const Bits inf = round_nearest_even(Format::fp16, exact);
  ASSERT_EQ(inf, 0x7c00u);
  const ElementJudgement j = judge(Format::fp16, inf, inf, exact, 0, 1.0);
  EXPECT_EQ(j.verdict, Verdict::exact);
  EXPECT_TRUE(std::isinf(j.error));
  EXPECT_EQ(j.bound_usage, 0.0);
}

}  // namespace
}  // namespace ssmv::verify
