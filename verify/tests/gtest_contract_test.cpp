// EXPECT_WITHIN_CONTRACT / ASSERT_WITHIN_CONTRACT: an honest check passes; a check with a
// planted violation and an unwritten element fails with a message that has what
// torch.testing.assert_close prints (mismatched count and share, greatest absolute and
// relative difference with their index) plus verdicts, ULPs, bound usage and the worst
// element printed exactly.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include "verify/reports/gtest_contract.h"
#include "verify/tests/check_fixture.h"

namespace ssmv::verify {
namespace {

// y of small_problem() is [T = 70, H = 2, P = 4]: 560 elements, flat index (t·2 + h)·4 + p.
// Index 100 = token 12, head 1, dim 0 gets y + 1 (a VIOLATION); index 200 = token 25,
// head 0, dim 0 the poison pattern (INVALID: never written).
constexpr int64_t kViolated = 100, kUnwritten = 200;

// Statics: EXPECT_NONFATAL_FAILURE's statement may not use local variables.
const KernelCheck& honest() {
  static const KernelCheck kc = testing::chunk_scan_check(testing::small_problem());
  return kc;
}

const KernelCheck& planted() {
  static const KernelCheck kc = testing::planted_check(
      testing::small_problem(), honest(),
      {{kViolated, testing::plus_one(honest(), kViolated)}, {kUnwritten, poison_bits(Format::bf16)}});
  return kc;
}

TEST(WithinContract, HonestChunkScanTwinPasses) {
  ASSERT_EQ(honest().tensors.at(0).elements, 560);
  ASSERT_GT(honest().tensors.at(0).count(Verdict::within_contract), 0);  // not vacuous: rounding paths differ
  EXPECT_WITHIN_CONTRACT(honest());
  ASSERT_WITHIN_CONTRACT(honest());
}

TEST(WithinContract, PlantedErrorsAreFoundAsJudged) {
  const TensorReport& y = planted().tensors.at(0);
  EXPECT_EQ(y.count(Verdict::violation), 1);
  EXPECT_EQ(y.count(Verdict::invalid), 1);
  EXPECT_EQ(y.worst.index, kUnwritten);  // INVALID ranks first
  EXPECT_TRUE(y.worst.judgement.unwritten);
  EXPECT_EQ(y.max_abs_difference.index, kViolated);
}

TEST(WithinContract, FailureMessageHasAssertCloseFiguresAndMore) {
  const std::string m = check_failure_message(planted());
  const TensorReport& y = planted().tensors.at(0);
  // 2 of 560 elements: 0.357% (%.3g).
  EXPECT_NE(m.find("Mismatched elements (VIOLATION + INVALID): 2 / 560 (0.357%)"), std::string::npos) << m;
  EXPECT_NE(m.find("Greatest absolute difference: " + exact_text(y.max_abs_difference.value) +
                   " at index (sequence 0, token 12, head 1, dim 0) [flat 100]"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("Greatest relative difference: "), std::string::npos) << m;
  EXPECT_NE(m.find("Verdicts: EXACT " + std::to_string(y.count(Verdict::exact)) + ", WITHIN_CONTRACT " +
                   std::to_string(y.count(Verdict::within_contract)) + ", VIOLATION 1, INVALID 1"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("ULP distance p50 / p99 / max (valid elements): "), std::string::npos) << m;
  EXPECT_NE(m.find("Max bound usage (error / bound): inf"), std::string::npos) << m;
  EXPECT_NE(m.find("worst element: (sequence 0, token 25, head 0, dim 0) [flat index 200]: INVALID, inf x bound, "
                   "never written (poison pattern)"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("computed: 0x7fa5 = nan"), std::string::npos) << m;
  EXPECT_NE(m.find("correctly rounded " + value_text(Format::bf16, y.worst.exact_rounded)), std::string::npos) << m;
  // The final state [S = 2, H = 2, P = 4, N = 16] is within its contract: one line.
  EXPECT_NE(m.find("tensor 'final_state' (fp32, 256 elements): "), std::string::npos) << m;
}

TEST(WithinContract, ExpectReportsTheMessageAsNonFatal) {
  EXPECT_NONFATAL_FAILURE(EXPECT_WITHIN_CONTRACT(planted()), "Expected planted() to be within its contract.");
  EXPECT_NONFATAL_FAILURE(EXPECT_WITHIN_CONTRACT(planted()),
                          "Mismatched elements (VIOLATION + INVALID): 2 / 560 (0.357%)");
  EXPECT_NONFATAL_FAILURE(EXPECT_WITHIN_CONTRACT(planted()),
                          "at index (sequence 0, token 12, head 1, dim 0) [flat 100]");
  EXPECT_NONFATAL_FAILURE(EXPECT_WITHIN_CONTRACT(planted()), "computed: 0x7fa5 = nan");
}

TEST(WithinContract, AssertIsFatal) {
  EXPECT_FATAL_FAILURE(ASSERT_WITHIN_CONTRACT(planted()), "VIOLATION 1, INVALID 1");
}

}  // namespace
}  // namespace ssmv::verify
