// The docs/design.md §4 tensor-core model on hand-derived cases (each expected value is
// derived in its comment), and the chain/skip facts the twin relies on.
#include <gtest/gtest.h>

#include <cmath>

#include "fast/chunk_scan/mma_model.h"

namespace ssmv::chunk_scan {
namespace {

TEST(MmaModel, ProductsBelowTheTruncationGridVanish) {
  // c = 1 (reference exponent 1, so E = 1 and the grid is 2^-25); 16 products
  // 1.5·2^-26 = 0.75·2^-25 each truncate to 0: result 1, although the exact sum
  // 1 + 24·2^-26 = 1 + 3·2^-23 is an fp32 value.
  float a[16], b[16];
  for (int k = 0; k < 16; ++k) a[k] = 0x1.8p-26f, b[k] = 1.0f;
  EXPECT_EQ(mma_step(a, b, 16, 1.0f), 1.0f);
}

TEST(MmaModel, SumRoundsTowardZero) {
  // c = 1, one product 1·1.5·2^-23 (reference exponent −22 < E = 1; 1.5·2^-23 = 6·2^-25 is
  // on the grid): exact sum 1 + 1.5·2^-23 lies between 1 + 2^-23 and 1 + 2^-22; toward
  // zero gives 1 + 2^-23 (nearest-even would give 1 + 2^-22).
  const float a[1] = {1.0f}, b[1] = {0x1.8p-23f};
  EXPECT_EQ(mma_step(a, b, 1, 1.0f), 1.0f + 0x1p-23f);
  const float bn[1] = {-0x1.8p-23f};
  EXPECT_EQ(mma_step(a, bn, 1, -1.0f), -1.0f - 0x1p-23f);
}

TEST(MmaModel, ReferenceExponentOfAProductIsOneAboveItsFactors) {
  // a = b = 1.5 (e = 0): product 2.25 with reference exponent 0+0+1 = 1, so E = 1 and the
  // grid is 2^-25 even though no term reaches 2^1 from c. c = 2^-26·3 (e = −25, ref −24)
  // truncates to 2^-25·1 (3·2^-26 = 1.5·2^-25 → 1·2^-25). Sum 2.25 + 2^-25 rounds toward
  // zero at ulp(2.25) = 2^-22: 2.25.
  const float a[1] = {1.5f}, b[1] = {1.5f};
  EXPECT_EQ(mma_step(a, b, 1, 0x1.8p-25f), 2.25f);
  // Same with c = 2^-22 (on the grid, one ULP of 2.25): 2.25 + 2^-22 exactly.
  EXPECT_EQ(mma_step(a, b, 1, 0x1p-22f), 2.25f + 0x1p-22f);
}

TEST(MmaModel, TinySumsTruncateNoFinerThanTwoToMinus158) {
  // p1 = 2^-70·2^-70 = 2^-140 (reference exponent −139), p2 = −2^-79·2^-80 = −2^-159.
  // E = max(−139, −132) = −132, grid 2^-158: p2 truncates to 0 and the sum is 2^-140.
  // Without the clamp (grid 2^-165) the sum 2^-140 − 2^-159 would round toward zero in the
  // subnormal range to 2^-140 − 2^-149 = 0x1.fep-141.
  const float a[2] = {0x1p-70f, -0x1p-79f}, b[2] = {0x1p-70f, 0x1p-80f};
  EXPECT_EQ(mma_step(a, b, 2, 0.0f), 0x1p-140f);
}

TEST(MmaModel, TinySumMeasuredOnTheH200) {
  // One of the outputs that decided the clamp (tests/mma_dump.cpp, regime "targeted"):
  // E = −134, so the grid is 2^-158, not 2^-160. The products are exact at 2^-160 and sum
  // to 0x1.11bbfe8p-135, 3·2^-160 below the multiple of 2^-149 0x1.11bcp-135; at 2^-158
  // the last product −0x1.cc8cp-146 = −29475·2^-160 truncates to −7368·2^-158 (3·2^-160
  // less in magnitude), the sum reaches the multiple, and mma.sync returned it.
  const float a[4] = {0x1.28p-67f, 0x1.0ep-67f, -0x1.34p-68f, 0x1.c2p-74f};
  const float b[4] = {0x1.1p-68f, -0x1.12p-71f, 0x1.d6p-74f, -0x1.06p-72f};
  EXPECT_EQ(mma_step(a, b, 4, 0.0f), 0x1.11bcp-135f);
}

TEST(MmaModel, SubnormalAccumulatorReadsItsExponentField) {
  // c = −2^-140 (subnormal fp32): e(c) = −126, reference exponent −125, grid 2^-151. The
  // product 2^-78·2^-79 = 2^-157 truncates to 0, the result is c. Were e(c) = −140, E would
  // be the clamp −132 (grid 2^-158), the product would stay, and −2^-140 + 2^-157 would
  // round toward zero to −(2^-140 − 2^-149) = −0x1.fep-141.
  const float a[1] = {0x1p-78f}, b[1] = {0x1p-79f};
  EXPECT_EQ(mma_step(a, b, 1, -0x1p-140f), -0x1p-140f);
}

TEST(MmaModel, ZeroProductsLeaveTheAccumulatorUnchanged) {
  float a[16] = {}, b[16];
  for (int k = 0; k < 16; ++k) b[k] = float(k + 1);
  for (float c : {0x1.234566p-3f, -7.0f, 0x1.fffffep100f, 0.0f}) {
    EXPECT_EQ(mma_step(a, b, 16, c), c);
  }
}

TEST(MmaModel, ChainIsStepsOfSixteenInOrder) {
  // 40 terms = steps [0,16), [16,32), [32,40) chained through one accumulator.
  float a[40], b[40];
  for (int k = 0; k < 40; ++k) {
    a[k] = std::ldexp(1.0f + float(k % 7) / 8.0f, (k * 5) % 17 - 8);
    b[k] = std::ldexp(1.0f - float(k % 5) / 8.0f, (k * 3) % 13 - 6) * (k % 3 == 0 ? -1.0f : 1.0f);
  }
  float acc = 0.25f;
  acc = mma_step(a, b, 16, acc);
  acc = mma_step(a + 16, b + 16, 16, acc);
  acc = mma_step(a + 32, b + 32, 8, acc);
  EXPECT_EQ(mma_chain(a, 1, b, 1, 40, 0.25f), acc);
}

TEST(MmaModel, ExactSmallIntegersAgreeWithExactArithmetic) {
  // Integers below 2^8 (exact in bf16): every product and sum is far above the grid
  // 2^(E−26), so the result is the exact integer sum.
  float a[16], b[16];
  double exact = 3.0;
  for (int k = 0; k < 16; ++k) {
    a[k] = float(k + 1);
    b[k] = float(17 - 2 * k);
    exact += double(a[k]) * double(b[k]);
  }
  EXPECT_EQ(double(mma_step(a, b, 16, 3.0f)), exact);
}

}  // namespace
}  // namespace ssmv::chunk_scan
