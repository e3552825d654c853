// Rounding to fp32/bf16/fp16 from double (spec/format.cpp) and from MPFR
// (reference/round.cpp: round-to-odd double, then spec's round_nearest_even), checked
// against the independent MPFR oracle of ieee_oracle.h.
//
// Exhaustive for bf16 and fp16: every pattern, every pair of neighbouring values (also
// across zero and from max_finite to the overflow threshold 2^(emax+1)). Sampled for
// fp32: every binade edge (each exponent field, both signs, 10 mantissas at its ends and
// middle) plus every 16381st positive pattern; see fp32_sample_patterns.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <ostream>
#include <random>
#include <vector>

#include "reference/round.h"
#include "reference/tests/ieee_oracle.h"

namespace ssmv {
// Names the format in test listings ("GetParam() = bf16" rather than the raw byte).
void PrintTo(Format f, std::ostream* os) { *os << format_name(f); }
}  // namespace ssmv

namespace ssmv::ref::testing {
namespace {

constexpr mpfr_prec_t kWide = 200;  // "just above/below the midpoint": 2^-199 relative
constexpr uint64_t kSeed = 0x5eed'f0f0'2026'0002ull;

Bits inf_pattern(Format f) {
  const FormatInfo& fi = format_info(f);
  return ((Bits{1} << fi.exponent_bits) - 1) << (fi.precision - 1);
}
Bits sign_mask(Format f) { return Bits{1} << (format_info(f).total_bits - 1); }

// Both implementations on x against the oracle; x exact in double also through the
// double path.
::testing::AssertionResult rounds_like_oracle(Format f, mpfr_srcptr x) {
  const Bits want = oracle_round(f, x);
  const Bits via_mpfr = round_nearest_even(f, x);
  if (via_mpfr != want) {
    return ::testing::AssertionFailure()
           << format_name(f) << ": ref::round_nearest_even(" << hex_string(x) << ") = "
           << describe(f, via_mpfr) << ", MPFR oracle " << describe(f, want);
  }
  const double d = mpfr_get_d(x, MPFR_RNDN);
  if (!mpfr_nan_p(x) && mpfr_cmp_d(x, d) == 0) {
    const Bits via_double = ssmv::round_nearest_even(f, d);
    if (via_double != want) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%a", d);
      return ::testing::AssertionFailure()
             << format_name(f) << ": round_nearest_even(double " << buf << ") = "
             << describe(f, via_double) << ", MPFR oracle " << describe(f, want);
    }
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult double_rounds_like_oracle(Format f, double d) {
  Mpfr x(53);
  mpfr_set_d(x.v, d, MPFR_RNDN);
  return rounds_like_oracle(f, x.v);
}

// The inputs around one gap [lo, hi] of the format (hi may be the virtual next value
// 2^(emax+1) above max_finite): lo itself (which must come back unchanged), the exact
// midpoint (a tie), the doubles next to it, the 200-bit values next to it, and the seven
// interior points lo + k*(hi-lo)/8. All of them are exact in double (p <= 24 and the gap
// is a power of two), and negated (so lo = 0 also gives -0).
::testing::AssertionResult gap_rounds_like_oracle(Format f, double lo, double hi) {
  const double mid = lo + (hi - lo) / 2;
  for (double s : {1.0, -1.0}) {
    std::vector<double> doubles = {s * lo, s * mid, std::nextafter(s * mid, 1e300),
                                   std::nextafter(s * mid, -1e300)};
    for (int k = 1; k < 8; ++k) doubles.push_back(s * (lo + k * ((hi - lo) / 8)));
    for (double d : doubles) {
      if (auto r = double_rounds_like_oracle(f, d); !r) return r;
    }
    Mpfr w(kWide);
    mpfr_set_d(w.v, s * mid, MPFR_RNDN);
    mpfr_nextabove(w.v);
    if (auto r = rounds_like_oracle(f, w.v); !r) return r;
    mpfr_set_d(w.v, s * mid, MPFR_RNDN);
    mpfr_nextbelow(w.v);
    if (auto r = rounds_like_oracle(f, w.v); !r) return r;
  }
  return ::testing::AssertionSuccess();
}

// The gap above the non-negative finite pattern b (exact values from the oracle).
::testing::AssertionResult gap_above_rounds_like_oracle(Format f, Bits b) {
  const FormatInfo& fi = format_info(f);
  const double lo = oracle_value_d(f, b);
  const double hi = b + 1 == inf_pattern(f) ? std::ldexp(1.0, fi.emax + 1) : oracle_value_d(f, b + 1);
  return gap_rounds_like_oracle(f, lo, hi);
}

// Positive fp32 patterns below +Inf: at every exponent field the mantissas 0..3, the
// middle three and the top three (binade edges, the subnormal range's edges), plus every
// 16381st pattern (16381 is prime, so the low mantissa bits vary): ~133,000 patterns.
std::vector<Bits> fp32_sample_patterns() {
  std::vector<Bits> out;
  const Bits top = 0x7fffff, half = 0x400000;
  for (Bits e = 0; e < 0xff; ++e) {
    for (Bits m : {Bits{0}, Bits{1}, Bits{2}, Bits{3}, half - 1, half, half + 1, top - 2,
                   top - 1, top}) {
      out.push_back((e << 23) | m);
    }
  }
  for (Bits b = 0; b < 0x7f800000u; b += 16381) out.push_back(b);
  return out;
}

class Round16 : public ::testing::TestWithParam<Format> {};

// The oracle itself on hand-derived points, so that it cannot be vacuously "right".
TEST(IeeeOracle, HandDerivedPoints) {
  // bf16 (p = 8): 1 + 2^-8 is the tie between 1 (0x3f80, even) and 1 + 2^-7 (0x3f81).
  EXPECT_EQ(oracle_round_d(Format::bf16, 1 + 0x1p-8), 0x3f80u);
  EXPECT_EQ(oracle_round_d(Format::bf16, 1 + 3 * 0x1p-8), 0x3f82u);  // tie 0x3f81/0x3f82
  // fp16: max 65504, ulp 32; 65520 = max + ulp/2 overflows, anything below does not.
  EXPECT_EQ(oracle_round_d(Format::fp16, 65520.0), 0x7c00u);
  EXPECT_EQ(oracle_round_d(Format::fp16, std::nextafter(65520.0, 0.0)), 0x7bffu);
  // fp16 subnormals: min 2^-24; 2^-25 ties to +0, just above goes to 0x0001, 3*2^-25 ties
  // between 0x0001 and 0x0002 (even).
  EXPECT_EQ(oracle_round_d(Format::fp16, 0x1p-25), 0x0000u);
  EXPECT_EQ(oracle_round_d(Format::fp16, -0x1p-25), 0x8000u);
  EXPECT_EQ(oracle_round_d(Format::fp16, std::nextafter(0x1p-25, 1.0)), 0x0001u);
  EXPECT_EQ(oracle_round_d(Format::fp16, 3 * 0x1p-25), 0x0002u);
  // fp16 largest subnormal 1023*2^-24 up to min normal 2^-14 (0x0400): tie goes to 0x0400.
  EXPECT_EQ(oracle_round_d(Format::fp16, 1023.5 * 0x1p-24), 0x0400u);
  EXPECT_EQ(oracle_round_d(Format::fp32, 0x1p-150), 0x00000000u);
  EXPECT_EQ(oracle_round_d(Format::fp32, 0x1.000002p-150), 0x00000001u);
  EXPECT_EQ(oracle_next_up(Format::fp16, 0x8001), 0x8000u);  // -min_subnormal -> -0
  EXPECT_EQ(oracle_next_up(Format::fp16, 0x7bff), 0x7c00u);  // max -> +Inf
  EXPECT_EQ(oracle_next_down(Format::bf16, 0x0000), 0x8001u);  // +0 -> -min_subnormal
}

TEST(IeeeOracle, RestoresExponentRange) {
  const mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
  oracle_round_d(Format::fp16, 0x1p-30);
  oracle_next_up(Format::bf16, 0x0001);
  EXPECT_EQ(mpfr_get_emin(), emin);
  EXPECT_EQ(mpfr_get_emax(), emax);
}

// decode is the exact value of every pattern; NaN patterns decode to NaN with the sign.
TEST_P(Round16, DecodeEveryPattern) {
  const Format f = GetParam();
  for (Bits b = 0; b <= 0xffff; ++b) {
    const double got = decode(f, b), want = oracle_value_d(f, b);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << hex_bits(f, b) << " decodes to " << got;
      ASSERT_EQ(std::signbit(got), (b & sign_mask(f)) != 0) << hex_bits(f, b);
      continue;
    }
    ASSERT_EQ(std::memcmp(&got, &want, sizeof got), 0)
        << format_name(f) << " decode(" << describe(f, b) << ") = " << got;
  }
}

// The MPFR path gives back every pattern (NaN: the canonical NaN).
TEST_P(Round16, EncodeEveryPatternThroughMpfr) {
  const Format f = GetParam();
  Mpfr x(64);
  for (Bits b = 0; b <= 0xffff; ++b) {
    oracle_value(f, b, x.v);
    const Bits want = mpfr_nan_p(x.v) ? oracle_canonical_nan(f) : b;
    ASSERT_EQ(round_nearest_even(f, x.v), want) << format_name(f) << " " << describe(f, b);
    ASSERT_EQ(oracle_round(f, x.v), want) << "oracle, " << format_name(f) << " " << describe(f, b);
  }
}

// Every gap between neighbours, both signs, up to the overflow threshold.
TEST_P(Round16, EveryGapMidpointAndNeighbours) {
  const Format f = GetParam();
  for (Bits b = 0; b < inf_pattern(f); ++b) ASSERT_TRUE(gap_above_rounds_like_oracle(f, b));
}

TEST_P(Round16, NextUpDownEveryPattern) {
  const Format f = GetParam();
  for (Bits b = 0; b <= 0xffff; ++b) {
    ASSERT_EQ(next_up(f, b), oracle_next_up(f, b))
        << format_name(f) << " next_up(" << describe(f, b) << ") = " << describe(f, next_up(f, b));
    ASSERT_EQ(next_down(f, b), oracle_next_down(f, b))
        << format_name(f) << " next_down(" << describe(f, b)
        << ") = " << describe(f, next_down(f, b));
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, Round16, ::testing::Values(Format::bf16, Format::fp16),
                         [](const auto& info) { return std::string(format_name(info.param)); });

TEST(RoundFp32, GapSample) {
  for (Bits b : fp32_sample_patterns()) {
    ASSERT_TRUE(gap_above_rounds_like_oracle(Format::fp32, b));
  }
}

TEST(RoundFp32, NextUpDownSample) {
  const Format f = Format::fp32;
  std::vector<Bits> patterns = fp32_sample_patterns();
  patterns.push_back(0x7f800000u);  // +Inf
  patterns.push_back(0x7fc00000u);  // NaN
  for (Bits p : patterns) {
    for (Bits b : {p, p | 0x80000000u}) {
      ASSERT_EQ(next_up(f, b), oracle_next_up(f, b)) << "next_up(" << describe(f, b) << ")";
      ASSERT_EQ(next_down(f, b), oracle_next_down(f, b)) << "next_down(" << describe(f, b) << ")";
    }
  }
}

// Overflow: max + ulp/2 exactly is a tie between max (odd mantissa) and the virtual
// 2^(emax+1) (even), so it goes to Inf; anything below, however close, goes to max.
TEST(RoundSpecial, OverflowThreshold) {
  for (Format f : {Format::fp32, Format::bf16, Format::fp16}) {
    const FormatInfo& fi = format_info(f);
    const double threshold = fi.max_finite + ulp_of(f, fi.max_finite) / 2;
    for (double s : {1.0, -1.0}) {
      const Bits inf = (s < 0 ? sign_mask(f) : 0) | inf_pattern(f);
      const Bits max = inf - 1;
      Mpfr x(kWide);
      mpfr_set_d(x.v, s * threshold, MPFR_RNDN);
      EXPECT_EQ(round_nearest_even(f, x.v), inf) << format_name(f) << " " << hex_string(x.v);
      EXPECT_EQ(ssmv::round_nearest_even(f, s * threshold), inf) << format_name(f);
      EXPECT_EQ(ssmv::round_nearest_even(f, std::nextafter(s * threshold, 0.0)), max)
          << format_name(f);
      if (s > 0) mpfr_nextbelow(x.v); else mpfr_nextabove(x.v);  // 2^-199 toward zero
      EXPECT_EQ(round_nearest_even(f, x.v), max) << format_name(f) << " " << hex_string(x.v);
      EXPECT_EQ(oracle_round(f, x.v), max) << "oracle " << format_name(f);
    }
  }
}

// Far outside double's range, only MPFR can hold the value: 2^±2000 go to ±Inf and ±0
// (round_to_odd_double gives ±DBL_MAX and ±2^-1074, both odd). So do the smallest
// subnormal double and DBL_MAX from double.
TEST(RoundSpecial, FarOutsideDoubleRange) {
  for (Format f : {Format::fp32, Format::bf16, Format::fp16}) {
    for (int s : {1, -1}) {
      const Bits sign = s < 0 ? sign_mask(f) : 0;
      Mpfr x(kWide);
      mpfr_set_si_2exp(x.v, s, 2000, MPFR_RNDN);
      EXPECT_EQ(round_to_odd_double(x.v), s * std::numeric_limits<double>::max());
      EXPECT_EQ(round_nearest_even(f, x.v), sign | inf_pattern(f)) << hex_string(x.v);
      EXPECT_TRUE(rounds_like_oracle(f, x.v));
      mpfr_set_si_2exp(x.v, s, -2000, MPFR_RNDN);
      EXPECT_EQ(round_to_odd_double(x.v), s * 0x1p-1074);
      EXPECT_EQ(round_nearest_even(f, x.v), sign) << hex_string(x.v);
      EXPECT_TRUE(rounds_like_oracle(f, x.v));
      EXPECT_EQ(ssmv::round_nearest_even(f, s * 0x1p-1074), sign);
      EXPECT_EQ(ssmv::round_nearest_even(f, s * std::numeric_limits<double>::max()),
                sign | inf_pattern(f));
      mpfr_set_inf(x.v, s);
      EXPECT_EQ(round_nearest_even(f, x.v), sign | inf_pattern(f));
      mpfr_set_zero(x.v, s);
      EXPECT_EQ(round_nearest_even(f, x.v), sign);
    }
  }
}

// Underflow keeps the sign: below half the smallest subnormal every value goes to ±0,
// at exactly half it ties to ±0 (even), just above half to ±min_subnormal.
TEST(RoundSpecial, UnderflowKeepsSign) {
  for (Format f : {Format::fp32, Format::bf16, Format::fp16}) {
    const double half_min = format_info(f).min_subnormal / 2;
    for (int s : {1, -1}) {
      const Bits sign = s < 0 ? sign_mask(f) : 0;
      EXPECT_EQ(ssmv::round_nearest_even(f, s * half_min), sign) << format_name(f);
      EXPECT_EQ(ssmv::round_nearest_even(f, s * half_min / 3), sign) << format_name(f);
      EXPECT_EQ(ssmv::round_nearest_even(f, std::nextafter(s * half_min, s * 1.0)), sign | 1)
          << format_name(f);
      Mpfr x(kWide);
      mpfr_set_d(x.v, s * half_min, MPFR_RNDN);
      if (s > 0) mpfr_nextbelow(x.v); else mpfr_nextabove(x.v);
      EXPECT_EQ(round_nearest_even(f, x.v), sign) << hex_string(x.v);
      mpfr_set_d(x.v, s * half_min, MPFR_RNDN);
      if (s > 0) mpfr_nextabove(x.v); else mpfr_nextbelow(x.v);
      EXPECT_EQ(round_nearest_even(f, x.v), sign | 1) << hex_string(x.v);
    }
  }
}

TEST(RoundSpecial, NanIsCanonical) {
  for (Format f : {Format::fp32, Format::bf16, Format::fp16}) {
    Mpfr x(kWide);
    mpfr_set_nan(x.v);
    EXPECT_EQ(round_nearest_even(f, x.v), oracle_canonical_nan(f)) << format_name(f);
    EXPECT_EQ(ssmv::round_nearest_even(f, -std::numeric_limits<double>::quiet_NaN()),
              oracle_canonical_nan(f));
    EXPECT_TRUE(std::isnan(round_to_odd_double(x.v)));
  }
}

// round_to_odd_double(x) is the one odd double strictly within one double-ulp of x, or
// x itself when x is a double (odd doubles are two ulps apart, so this characterises it).
// Random 200-bit values over exponents [-1100, 1100] (incl. double subnormals and
// overflow), and random doubles which must come back unchanged.
TEST(RoundToOdd, RandomValuesCharacterised) {
  std::mt19937_64 rng(kSeed);
  gmp_randstate_t state;
  gmp_randinit_default(state);
  gmp_randseed_ui(state, static_cast<unsigned long>(kSeed));
  Mpfr x(kWide);
  int inexact = 0;
  for (int i = 0; i < 200000; ++i) {
    mpfr_urandomb(x.v, state);  // [0, 1) with 200 random bits
    if (i % 4 == 0) mpfr_prec_round(x.v, 53, MPFR_RNDZ), mpfr_prec_round(x.v, kWide, MPFR_RNDZ);
    mpfr_mul_2si(x.v, x.v, static_cast<long>(rng() % 2201) - 1100, MPFR_RNDN);
    if (rng() & 1) mpfr_neg(x.v, x.v, MPFR_RNDN);
    const double d = round_to_odd_double(x.v);
    if (mpfr_cmp_d(x.v, d) == 0) continue;
    ++inexact;
    uint64_t bits;
    std::memcpy(&bits, &d, sizeof bits);
    const double toward_zero = std::nextafter(d, 0.0);
    const double away = std::nextafter(d, std::copysign(INFINITY, d));
    const bool within = d > 0 ? mpfr_cmp_d(x.v, toward_zero) > 0 && mpfr_cmp_d(x.v, away) < 0
                              : mpfr_cmp_d(x.v, toward_zero) < 0 && mpfr_cmp_d(x.v, away) > 0;
    ASSERT_TRUE((bits & 1) == 1 && within)
        << "seed " << kSeed << " i " << i << ": round_to_odd_double(" << hex_string(x.v)
        << ") = " << d;
  }
  gmp_randclear(state);
  EXPECT_GT(inexact, 100000);  // most 200-bit values are not doubles: not vacuous
}

}  // namespace
}  // namespace ssmv::ref::testing
