// arithmetic.h's exp_nonpositive against fm::exp, bit for bit, for x ≤ 0: the kernels and
// the twin take segment decays from it, and the contract's exp budget is fm::exp's.
// SSMV_STAGE_MATH_STRIDE=1 checks every fp32 pattern in [−0, −Inf] (about 20 s).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>

#include "fast/chunk_scan/arithmetic.h"

namespace ssmv::chunk_scan {
namespace {

TEST(StageMath, ExpNonpositiveEqualsFmExpBitForBit) {
  uint32_t stride = 97;  // about 2.2e7 of the 2^31 non-positive patterns, every binade
  if (const char* env = std::getenv("SSMV_STAGE_MATH_STRIDE")) stride = uint32_t(std::atoi(env));
  uint64_t checked = 0, differ = 0;
  auto check = [&](uint32_t bits) {
    const float x = fm::float_of(bits);
    if (x != x) return;
    ++checked;
    if (fm::bits_of(exp_nonpositive(x)) != fm::bits_of(fm::exp(x))) {
      if (++differ <= 5) ADD_FAILURE() << "x = " << std::hexfloat << x;
    }
  };
  for (uint64_t b = 0x80000000u; b <= 0xff800000u; b += stride) check(uint32_t(b));
  // The edges: −0, the clamp at −104 and around it, the subnormal-result range, −Inf.
  for (uint32_t b : {0x80000000u, 0x80000001u, 0xc2d00000u, 0xc2cfffffu, 0xc2d00001u, 0xc2aeac50u,
                     0xc2aeac4fu, 0xc2ce8ed0u, 0xbf317218u, 0xff800000u, 0xff7fffffu}) {
    check(b);
  }
  for (uint32_t b = 0xc2a00000u; b < 0xc2d00000u; b += 7) check(b);  // results below 2^-126
  EXPECT_EQ(differ, 0u) << "of " << checked;
  EXPECT_GT(checked, 10000000u);
  // segment_decay of NaN and of positive d is exp(0) = 1.
  EXPECT_EQ(segment_decay(fm::float_of(0x7fc00000u)), 1.0f);
  EXPECT_EQ(segment_decay(3.0f), 1.0f);
}

}  // namespace
}  // namespace ssmv::chunk_scan
