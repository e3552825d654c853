// The tensor-core model (mma_model.cpp, bit arithmetic on significands) against a literal
// transcription of docs/design.md §4 in double arithmetic (products in double, ilogb for the
// reference exponents, ldexp and trunc for the truncation), bit for bit, over random 16-wide
// steps in every operand regime the twin meets: spread exponents, tiny sums around the
// −132 clamp, subnormal operands and accumulators, results near FLT_MAX, zeros and partial
// steps; both operand formats and the three subnormal rules.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>

#include "fast/chunk_scan/mma_model.h"
#include "spec/format.h"

namespace ssmv::chunk_scan {
namespace {

// docs/design.md §4 as written: products exact in double (24-bit by 24-bit significands),
// reference exponents from ilogb (a subnormal reads emin unless the rule says otherwise,
// c reads −126 at least), E ≥ −132, each term truncated toward zero to a multiple of
// 2^(E−26), the integer sum rounded toward zero to fp32 (multiples of 2^-149 below 2^-126,
// ±FLT_MAX above the range), a zero result +0.
float literal_step(const float* a, const float* b, int count, float c, MmaOperands ops) {
  const int emin = format_info(ops.format).emin;
  auto e_of = [](float v, int lo) { return std::max(std::ilogb(v), lo); };
  double term[17];
  int ref[17], n = 0;
  for (int k = 0; k < count; ++k) {
    const double p = double(a[k]) * double(b[k]);
    if (p == 0.0) continue;
    if (ops.rule == SubnormalRule::flush && (std::ilogb(a[k]) < emin || std::ilogb(b[k]) < emin)) continue;
    term[n] = p;
    ref[n] = ops.rule == SubnormalRule::true_exponent ? std::ilogb(a[k]) + std::ilogb(b[k]) + 1
                                                       : e_of(a[k], emin) + e_of(b[k], emin) + 1;
    ++n;
  }
  if (n == 0) return c == 0.0f ? 0.0f : c;
  if (c != 0.0f) {
    term[n] = c;
    ref[n++] = e_of(c, -126) + 1;
  }
  int E = -132;
  for (int i = 0; i < n; ++i) E = std::max(E, ref[i]);
  int64_t sum = 0;
  for (int i = 0; i < n; ++i) sum += int64_t(std::trunc(std::ldexp(term[i], 26 - E)));
  if (sum == 0) return 0.0f;
  // Toward zero to fp32: keep the bits from 2^max(lead − 23, −149) up.
  const double exact = std::ldexp(double(sum), E - 26);  // |sum| < 2^32: exact
  const int lead = std::ilogb(exact);
  if (lead > 127) return exact < 0 ? -0x1.fffffep127f : 0x1.fffffep127f;
  const int lsb = std::max(lead - 23, -149);
  const double kept = std::ldexp(std::trunc(std::ldexp(exact, -lsb)), lsb);
  return kept == 0.0 ? 0.0f : float(kept);
}

// A random finite value of `f` with exponent in [lo, hi] (rounded to the format, so
// possibly subnormal or zero at the low end; drawn again where it rounds to ±Inf), negative
// half the time, zero with probability p_zero.
float draw(std::mt19937_64& rng, Format f, int lo, int hi, double p_zero) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  if (unit(rng) < p_zero) return 0.0f;
  for (;;) {
    const int e = lo + int(rng() % uint64_t(hi - lo + 1));
    const double v = round_value(f, std::ldexp(1.0 + unit(rng), e) * (rng() & 1 ? -1.0 : 1.0));
    if (std::isfinite(v)) return float(v);
  }
}

struct Regime {
  const char* name;
  int alo, ahi, blo, bhi;  // operand exponent ranges
  int clo, chi;            // accumulator exponent range
  double p_zero;
};

// fp16 operands cover exponents [−24, 15]; bf16 [−133, 127].
constexpr Regime kBf16Regimes[] = {
    {"spread", -16, 16, -16, 16, -20, 20, 0.05},
    {"tiny sums", -72, -62, -75, -64, -150, -125, 0.1},
    {"below the clamp", -80, -68, -82, -68, -149, -140, 0.3},
    {"subnormal operands", -133, -120, -20, 0, -149, -100, 0.1},
    {"near FLT_MAX", 60, 63, 60, 63, 120, 127, 0.0},
    {"wide", -133, 127, -60, 0, -149, 127, 0.2},
};
constexpr Regime kFp16Regimes[] = {
    {"spread", -10, 10, -10, 10, -20, 20, 0.05},
    {"subnormal operands", -24, -12, -24, -10, -149, -40, 0.1},
    {"wide", -24, 15, -24, 15, -149, 40, 0.2},
};

void expect_agreement(Format format, const Regime& r, uint64_t seed) {
  std::mt19937_64 rng(seed);
  float a[16], b[16];
  int64_t checked = 0;
  for (SubnormalRule rule : {SubnormalRule::exponent_field, SubnormalRule::true_exponent, SubnormalRule::flush}) {
    const MmaOperands ops{format, rule};
    for (int i = 0; i < 20000; ++i) {
      const int count = i % 4 == 0 ? 1 + int(rng() % 16) : 16;
      for (int k = 0; k < count; ++k) {
        a[k] = draw(rng, format, r.alo, r.ahi, r.p_zero);
        b[k] = draw(rng, format, r.blo, r.bhi, r.p_zero);
      }
      const float c = draw(rng, Format::fp32, r.clo, r.chi, r.p_zero);
      const float want = literal_step(a, b, count, c, ops), got = mma_step(a, b, count, c, ops);
      uint32_t wb, gb;
      std::memcpy(&wb, &want, 4);
      std::memcpy(&gb, &got, 4);
      ASSERT_EQ(gb, wb) << format_name(format) << " " << r.name << " rule " << int(rule) << " step " << i
                        << ": c = " << std::hexfloat << c << ", a[0] = " << a[0] << ", b[0] = " << b[0];
      ++checked;
    }
  }
  EXPECT_EQ(checked, 60000);
}

TEST(MmaModelLiteral, Bf16EveryRegime) {
  uint64_t seed = 1;
  for (const Regime& r : kBf16Regimes) expect_agreement(Format::bf16, r, seed++);
}

TEST(MmaModelLiteral, Fp16EveryRegime) {
  uint64_t seed = 100;
  for (const Regime& r : kFp16Regimes) expect_agreement(Format::fp16, r, seed++);
}

TEST(MmaModelLiteral, ChainsOfTheTwinsLengths) {
  // mma_chain = mma_step over [16j, 16j + 16) in order, for the twin's strided reads.
  std::mt19937_64 rng(7);
  std::vector<float> a(256 * 3), b(256 * 2);
  for (float& v : a) v = draw(rng, Format::bf16, -20, 4, 0.05);
  for (float& v : b) v = draw(rng, Format::bf16, -8, 8, 0.05);
  for (int len : {1, 15, 16, 17, 64, 255, 256}) {
    float acc = 0.5f, a16[16], b16[16];
    for (int k0 = 0; k0 < len; k0 += 16) {
      const int count = std::min(16, len - k0);
      for (int k = 0; k < count; ++k) a16[k] = a[(k0 + k) * 3], b16[k] = b[(k0 + k) * 2];
      acc = literal_step(a16, b16, count, acc, MmaOperands{});
    }
    EXPECT_EQ(mma_chain(a.data(), 3, b.data(), 2, len, 0.5f), acc) << "len " << len;
  }
}

TEST(MmaModelLiteral, InfinityOrNanGivesTheIeeeSum) {
  // Not measured on the H200 (docs/design.md §4): the model returns the IEEE sum.
  const float inf = INFINITY;
  const float a[2] = {inf, 1.0f}, b[2] = {2.0f, 3.0f};
  EXPECT_EQ(mma_step(a, b, 2, 1.0f), inf);
  const float an[2] = {inf, -inf}, bn[2] = {1.0f, 1.0f};
  EXPECT_TRUE(std::isnan(mma_step(an, bn, 2, 0.0f)));
  const float z[1] = {0.0f}, o[1] = {1.0f};
  EXPECT_EQ(mma_step(z, o, 1, -inf), -inf);
  EXPECT_TRUE(std::isnan(mma_step(o, o, 1, NAN)));
}

}  // namespace
}  // namespace ssmv::chunk_scan
