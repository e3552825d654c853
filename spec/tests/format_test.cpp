// Properties of spec/format.h that need no MPFR: round trips, classification, NaN
// canonicalisation, next_up/next_down special cases, the ordered-integer line
// (ordered_index, ulp_distance), ulp_of, and fp32 rounding against the hardware cast.
// Rounding against MPFR lives in reference/tests/round_test.cpp.
//
// Exhaustive: every bf16 and fp16 pattern. fp32 is sampled (all 2^32 would take ~100 s of
// one core at ~25 ns a pattern): exhaustive over the exponent fields 0x00 and 0xff (every
// zero, subnormal, Inf and NaN), both signs, plus every 251st pattern of all 2^32 (~17
// million; 251 is prime, so every exponent and mantissa bit varies); fp32 decode,
// classification and round trip are checked against the C++ float<->double casts and
// std::fpclassify.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfenv>
#include <cmath>
#include <cstring>
#include <random>
#include <stdexcept>
#include <vector>

#include "spec/format.h"

namespace ssmv {
namespace {

constexpr uint64_t kSeed = 0x5eed'f0f0'2026'0001ull;
const Format kAll[] = {Format::fp32, Format::bf16, Format::fp16};
const Format k16[] = {Format::bf16, Format::fp16};

std::string hexd(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%a", v);
  return buf;
}
// "0x3f80 (0x1p+0)"
std::string describe(Format f, Bits b) { return hex_bits(f, b) + " (" + hexd(decode(f, b)) + ")"; }

Bits sign_mask(Format f) { return Bits{1} << (format_info(f).total_bits - 1); }
Bits inf_pattern(Format f) {
  const FormatInfo& fi = format_info(f);
  return ((Bits{1} << fi.exponent_bits) - 1) << (fi.precision - 1);
}
Bits max_pattern(Format f) { return inf_pattern(f) - 1; }
// Canonical quiet NaN: exponent all ones, top mantissa bit, sign 0.
Bits canonical_nan(Format f) {
  return inf_pattern(f) | (Bits{1} << (format_info(f).precision - 2));
}

Bits float_bits(float x) {
  Bits b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}
float bits_float(Bits b) {
  float x;
  std::memcpy(&x, &b, sizeof x);
  return x;
}

// Every non-NaN pattern of a 16-bit format, sorted by value, -0 just before +0 (so that
// next_up(-min_subnormal) = -0 and next_down(+min_subnormal) = +0 are the neighbours).
std::vector<Bits> sorted_patterns(Format f) {
  std::vector<Bits> out;
  for (Bits b = 0; b <= 0xffff; ++b) {
    if (!std::isnan(decode(f, b))) out.push_back(b);
  }
  std::stable_sort(out.begin(), out.end(),
                   [f](Bits a, Bits b) {
                     const double x = decode(f, a), y = decode(f, b);
                     return x < y || (x == y && std::signbit(x) && !std::signbit(y));
                   });
  return out;
}

// ---- format_info and parsing ------------------------------------------------------

TEST(FormatInfo, ConstantsFollowFromTheFields) {
  for (Format f : kAll) {
    const FormatInfo& fi = format_info(f);
    EXPECT_EQ(fi.total_bits, 1 + fi.exponent_bits + fi.precision - 1) << fi.name;
    EXPECT_EQ(fi.emax, (1 << (fi.exponent_bits - 1)) - 1) << fi.name;
    EXPECT_EQ(fi.emin, 1 - fi.emax) << fi.name;
    EXPECT_EQ(fi.unit_roundoff, std::ldexp(1.0, -fi.precision)) << fi.name;
    EXPECT_EQ(fi.max_finite, std::ldexp(2 - std::ldexp(1.0, 1 - fi.precision), fi.emax)) << fi.name;
    EXPECT_EQ(fi.min_subnormal, std::ldexp(1.0, fi.emin - fi.precision + 1)) << fi.name;
    EXPECT_EQ(decode(f, max_pattern(f)), fi.max_finite) << fi.name;
    EXPECT_EQ(decode(f, 1), fi.min_subnormal) << fi.name;
    Format parsed;
    ASSERT_TRUE(parse_format(fi.name, parsed)) << fi.name;
    EXPECT_EQ(parsed, f);
    EXPECT_EQ(format_name(f), fi.name);
  }
  Format parsed;
  EXPECT_FALSE(parse_format("fp8", parsed));
  EXPECT_EQ(hex_bits(Format::bf16, 0x3f80), "0x3f80");
  EXPECT_EQ(hex_bits(Format::fp32, 0x3f800000), "0x3f800000");
}

// ---- round trips ------------------------------------------------------------------

// decode then round_nearest_even gives the pattern back; NaN patterns decode to a NaN
// with the pattern's sign and round to the canonical NaN.
::testing::AssertionResult round_trips(Format f, Bits b) {
  const double v = decode(f, b);
  const Bits back = round_nearest_even(f, v);
  if (is_nan(f, b)) {
    if (!std::isnan(v) || std::signbit(v) != sign_bit(f, b) || back != canonical_nan(f) ||
        representable(f, v)) {
      return ::testing::AssertionFailure()
             << format_name(f) << " NaN " << hex_bits(f, b) << " decodes to " << hexd(v)
             << ", rounds to " << hex_bits(f, back) << " (canonical "
             << hex_bits(f, canonical_nan(f)) << ")";
    }
    return ::testing::AssertionSuccess();
  }
  if (back != b || !representable(f, v) || round_value(f, v) != v) {
    return ::testing::AssertionFailure() << format_name(f) << " " << describe(f, b)
                                         << " rounds back to " << describe(f, back);
  }
  return ::testing::AssertionSuccess();
}

TEST(FormatRoundTrip, EveryBf16AndFp16Pattern) {
  for (Format f : k16) {
    for (Bits b = 0; b <= 0xffff; ++b) {
      ASSERT_TRUE(round_trips(f, b));
      if (!is_nan(f, b)) {
        ASSERT_EQ(encode_exact(f, decode(f, b)), b) << describe(f, b);
      }
    }
  }
}

// is_nan/is_inf/is_zero/is_subnormal/sign_bit of an fp32 pattern agree with the float.
bool fp32_classified_like_float(Bits b) {
  const Format f = Format::fp32;
  const float x = bits_float(b);
  const int cls = std::fpclassify(x);
  return is_nan(f, b) == (cls == FP_NAN) && is_inf(f, b) == (cls == FP_INFINITE) &&
         is_zero(f, b) == (cls == FP_ZERO) && is_subnormal(f, b) == (cls == FP_SUBNORMAL) &&
         sign_bit(f, b) == std::signbit(x);
}

// fp32 decode agrees with the C++ cast float -> double (exact), the classification with
// std::fpclassify of the float, and the round trip holds.
::testing::AssertionResult fp32_pattern_ok(Bits b) {
  const Format f = Format::fp32;
  const double v = decode(f, b);
  const float x = bits_float(b);
  if (!fp32_classified_like_float(b)) {
    return ::testing::AssertionFailure()
           << "fp32 classification of " << hex_bits(f, b) << " disagrees with fpclassify "
           << std::fpclassify(x) << ": nan " << is_nan(f, b) << " inf " << is_inf(f, b) << " zero "
           << is_zero(f, b) << " subnormal " << is_subnormal(f, b) << " sign " << sign_bit(f, b);
  }
  const double cast = static_cast<double>(x);
  if (std::isnan(cast) ? !std::isnan(v) : std::memcmp(&v, &cast, sizeof v) != 0) {
    return ::testing::AssertionFailure() << "fp32 decode(" << hex_bits(Format::fp32, b)
                                         << ") = " << hexd(v) << ", cast gives " << hexd(cast);
  }
  return round_trips(Format::fp32, b);
}

// The same check without building messages (the loops below visit ~50 million patterns);
// a failure is re-checked by fp32_pattern_ok for the message.
bool fp32_pattern_ok_fast(Bits b) {
  const Format f = Format::fp32;
  const double v = decode(f, b);
  const float x = bits_float(b);
  if (!fp32_classified_like_float(b)) return false;
  if (x != x) {
    return v != v && std::signbit(v) == std::signbit(x) &&
           round_nearest_even(Format::fp32, v) == 0x7fc00000u;
  }
  const double cast = x;
  uint64_t vb, cb;
  std::memcpy(&vb, &v, sizeof vb);
  std::memcpy(&cb, &cast, sizeof cb);
  return vb == cb && round_nearest_even(Format::fp32, v) == b;
}

TEST(FormatRoundTrip, Fp32EdgeBinadesExhaustiveAndStrided) {
  for (Bits exp_field : {0x00u, 0xffu}) {  // every subnormal and zero; every Inf and NaN
    for (Bits sign : {0u, 0x80000000u}) {
      for (Bits m = 0; m < (1u << 23); ++m) {
        const Bits b = sign | exp_field << 23 | m;
        if (!fp32_pattern_ok_fast(b)) {
          ASSERT_TRUE(fp32_pattern_ok(b));
        }
      }
    }
  }
  for (uint64_t b = 0; b <= 0xffffffffu; b += 251) {
    if (!fp32_pattern_ok_fast(static_cast<Bits>(b))) {
      ASSERT_TRUE(fp32_pattern_ok(static_cast<Bits>(b)));
    }
  }
}

TEST(FormatRoundTrip, EncodeExactRejectsWithValue) {
  try {
    encode_exact(Format::bf16, 1 + 0x1p-8);  // the tie between 1 and 1 + 2^-7: not a bf16
    ADD_FAILURE() << "encode_exact accepted 1 + 2^-8 as bf16";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("0x1.01p+0"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("bf16"), std::string::npos) << e.what();
  }
  EXPECT_THROW(encode_exact(Format::fp16, std::nan("")), std::invalid_argument);
  EXPECT_EQ(encode_exact(Format::fp16, -INFINITY), 0xfc00u);
}

// round_nearest_even rounds to nearest even whatever the dynamic rounding mode, and
// leaves the mode as it found it.
TEST(FormatRounding, IgnoresAndRestoresTheDynamicRoundingMode) {
  const double ties[] = {1 + 0x1p-8, -(1 + 3 * 0x1p-8), 0x1p-134, 0x1.ffp127};
  std::vector<Bits> nearest;
  for (double t : ties) nearest.push_back(round_nearest_even(Format::bf16, t));
  // Derived: 1+2^-8 -> 1 (0x3f80); -(1+3*2^-8) -> -(1+2^-6) (0xbf82); 2^-134 = half the
  // smallest subnormal -> +0; 0x1.ffp127 = max + ulp/2 -> +Inf.
  EXPECT_EQ(nearest, (std::vector<Bits>{0x3f80, 0xbf82, 0x0000, 0x7f80}));
  for (int mode : {FE_UPWARD, FE_DOWNWARD, FE_TOWARDZERO}) {
    ASSERT_EQ(std::fesetround(mode), 0);
    for (size_t i = 0; i < std::size(ties); ++i) {
      EXPECT_EQ(round_nearest_even(Format::bf16, ties[i]), nearest[i])
          << "mode " << mode << " value " << hexd(ties[i]);
    }
    EXPECT_EQ(std::fegetround(), mode);
    std::fesetround(FE_TONEAREST);
  }
}

// ---- classification ---------------------------------------------------------------

TEST(FormatClassify, EveryBf16AndFp16Pattern) {
  for (Format f : k16) {
    const double min_normal = std::ldexp(1.0, format_info(f).emin);
    for (Bits b = 0; b <= 0xffff; ++b) {
      const double v = decode(f, b);
      ASSERT_EQ(is_nan(f, b), std::isnan(v)) << describe(f, b);
      ASSERT_EQ(is_inf(f, b), std::isinf(v)) << describe(f, b);
      ASSERT_EQ(is_zero(f, b), v == 0) << describe(f, b);
      ASSERT_EQ(is_subnormal(f, b), v != 0 && std::fabs(v) < min_normal) << describe(f, b);
      ASSERT_EQ(sign_bit(f, b), std::signbit(v)) << describe(f, b);
    }
  }
}

// ---- next_up / next_down ----------------------------------------------------------

TEST(FormatNext, SpecialCases) {
  for (Format f : kAll) {
    const Bits s = sign_mask(f), inf = inf_pattern(f), max = max_pattern(f);
    SCOPED_TRACE(std::string(format_name(f)));
    EXPECT_EQ(next_up(f, 0), 1u);          // +0 -> +min_subnormal
    EXPECT_EQ(next_up(f, s), 1u);          // -0 -> +min_subnormal
    EXPECT_EQ(next_down(f, 0), s | 1);     // +0 -> -min_subnormal
    EXPECT_EQ(next_down(f, s), s | 1);     // -0 -> -min_subnormal
    EXPECT_EQ(next_up(f, s | 1), s);       // -min_subnormal -> -0
    EXPECT_EQ(next_down(f, 1), 0u);        // +min_subnormal -> +0
    EXPECT_EQ(next_up(f, max), inf);       // +max -> +Inf
    EXPECT_EQ(next_down(f, s | max), s | inf);
    EXPECT_EQ(next_up(f, inf), inf);
    EXPECT_EQ(next_down(f, s | inf), s | inf);
    EXPECT_EQ(next_up(f, s | inf), s | max);  // -Inf -> -max
    EXPECT_EQ(next_down(f, inf), max);
    for (Bits nan : {canonical_nan(f), s | canonical_nan(f), inf | 1}) {
      EXPECT_EQ(next_up(f, nan), nan) << hex_bits(f, nan);
      EXPECT_EQ(next_down(f, nan), nan) << hex_bits(f, nan);
    }
  }
}

// ---- the ordered-integer line -----------------------------------------------------

// Over all values sorted: ordered_index is strictly increasing except that -0 and +0
// share index 0, neighbours are one apart, next_up/next_down move to the neighbour, and
// ulp_distance is the difference of ranks among distinct values (against 40 pivots).
TEST(FormatOrderedLine, EveryBf16AndFp16PatternInValueOrder) {
  for (Format f : k16) {
    const std::vector<Bits> sorted = sorted_patterns(f);
    ASSERT_EQ(sorted.front(), sign_mask(f) | inf_pattern(f));
    ASSERT_EQ(sorted.back(), inf_pattern(f));
    std::vector<int64_t> rank(sorted.size());
    for (size_t i = 1; i < sorted.size(); ++i) {
      const Bits a = sorted[i - 1], b = sorted[i];
      const bool same = decode(f, a) == decode(f, b);  // only -0, +0
      rank[i] = rank[i - 1] + (same ? 0 : 1);
      ASSERT_EQ(ordered_index(f, b) - ordered_index(f, a), same ? 0 : 1)
          << format_name(f) << " " << describe(f, a) << " then " << describe(f, b);
      ASSERT_EQ(ulp_distance(f, a, b), same ? 0 : 1) << describe(f, a) << " " << describe(f, b);
      if (!same) {
        ASSERT_EQ(next_up(f, a), b) << describe(f, a);
        ASSERT_EQ(next_down(f, b), a) << describe(f, b);
      }
    }
    ASSERT_EQ(ordered_index(f, 0), 0);
    ASSERT_EQ(ordered_index(f, sign_mask(f)), 0);
    std::mt19937_64 rng(kSeed);
    std::vector<size_t> pivots = {0, sorted.size() - 1, sorted.size() / 2};
    while (pivots.size() < 40) pivots.push_back(rng() % sorted.size());
    for (size_t j : pivots) {
      for (size_t i = 0; i < sorted.size(); ++i) {
        const int64_t want = std::abs(rank[i] - rank[j]);
        ASSERT_EQ(ulp_distance(f, sorted[i], sorted[j]), want)
            << describe(f, sorted[i]) << " to " << describe(f, sorted[j]);
        ASSERT_EQ(ulp_distance(f, sorted[j], sorted[i]), want);
      }
    }
  }
}

TEST(FormatUlpDistance, SpecialCases) {
  for (Format f : kAll) {
    SCOPED_TRACE(std::string(format_name(f)));
    const Bits s = sign_mask(f), inf = inf_pattern(f), max = max_pattern(f);
    EXPECT_EQ(ulp_distance(f, 0, s), 0);
    EXPECT_EQ(ulp_distance(f, s | 1, 1), 2);  // -min_sub, (±0), +min_sub
    EXPECT_EQ(ulp_distance(f, inf, max), 1);
    EXPECT_EQ(ulp_distance(f, s | max, max), 2 * static_cast<int64_t>(max));
    EXPECT_EQ(ulp_distance(f, s | inf, inf), 2 * static_cast<int64_t>(inf));
    for (Bits nan : {canonical_nan(f), s | canonical_nan(f), inf | 1}) {
      EXPECT_EQ(ulp_distance(f, nan, 0), kNanUlpDistance);
      EXPECT_EQ(ulp_distance(f, inf, nan), kNanUlpDistance);
      EXPECT_EQ(ulp_distance(f, nan, nan), kNanUlpDistance);
    }
  }
}

// A bf16 pattern shifted left by 16 is the fp32 pattern of the same value, and between
// two neighbouring bf16 values lie 2^16 - 1 fp32 values: so the fp32 index is 2^16 times
// the bf16 index (also for ±Inf and across zero) and every fp32 distance between such
// patterns is 2^16 times the bf16 distance; NaN stays NaN.
TEST(FormatUlpDistance, Fp32IsBf16TimesTwoToTheSixteen) {
  std::mt19937_64 rng(kSeed);
  std::vector<Bits> pivots = {0x0000, 0x8000, 0x0001, 0x8001, 0x3f80, 0x7f7f, 0xff80, 0x7fc0};
  while (pivots.size() < 32) pivots.push_back(static_cast<Bits>(rng() & 0xffff));
  for (Bits a = 0; a <= 0xffff; ++a) {
    const double v = decode(Format::bf16, a), w = decode(Format::fp32, a << 16);
    ASSERT_TRUE(std::isnan(v) ? std::isnan(w) : v == w) << describe(Format::bf16, a);
    if (!is_nan(Format::bf16, a)) {
      ASSERT_EQ(ordered_index(Format::fp32, a << 16), 65536 * ordered_index(Format::bf16, a));
    }
    for (Bits b : pivots) {
      const int64_t d16 = ulp_distance(Format::bf16, a, b);
      const int64_t d32 = ulp_distance(Format::fp32, a << 16, b << 16);
      ASSERT_EQ(d32, d16 == kNanUlpDistance ? kNanUlpDistance : 65536 * d16)
          << describe(Format::bf16, a) << " to " << describe(Format::bf16, b);
    }
  }
}

// ---- ulp_of -----------------------------------------------------------------------

// For every finite value x: ulp_of(x) is the gap from x to its neighbour away from zero
// (for ±max, the gap to its neighbour toward zero: 2^(emax-p+1)); points inside that gap
// share it; 0 has the subnormal spacing; beyond max, Inf and NaN get the spacing at max.
TEST(FormatUlpOf, EveryFiniteBf16AndFp16Value) {
  for (Format f : k16) {
    const FormatInfo& fi = format_info(f);
    for (Bits b = 0; b < inf_pattern(f); ++b) {
      const double x = decode(f, b);
      const double gap = b == max_pattern(f) ? x - decode(f, b - 1) : decode(f, b + 1) - x;
      ASSERT_EQ(ulp_of(f, x), gap) << describe(f, b);
      ASSERT_EQ(ulp_of(f, -x), gap) << describe(f, b | sign_mask(f));
      if (b != max_pattern(f)) {
        ASSERT_EQ(ulp_of(f, x + gap / 2), gap) << describe(f, b) << " + half a gap";
        ASSERT_EQ(ulp_of(f, -(x + gap / 2)), gap) << describe(f, b) << " - half a gap";
      }
    }
    const double at_max = std::ldexp(1.0, fi.emax - fi.precision + 1);
    EXPECT_EQ(ulp_of(f, 0.0), fi.min_subnormal);
    EXPECT_EQ(ulp_of(f, -0.0), fi.min_subnormal);
    for (double v : {2 * fi.max_finite, -2 * fi.max_finite, 1e300, (double)INFINITY,
                     -(double)INFINITY, std::nan("")}) {
      EXPECT_EQ(ulp_of(f, v), at_max) << format_name(f) << " " << hexd(v);
    }
  }
}

// fp32 ulp_of against nextafterf on the positive sample (every exponent field, mantissas
// at its edges, every 65521st pattern).
TEST(FormatUlpOf, Fp32AgainstNextafterf) {
  for (Bits e = 0; e < 0xff; ++e) {
    for (Bits m : {0u, 1u, 0x400000u, 0x7ffffeu, 0x7fffffu}) {
      const Bits b = e << 23 | m;
      const float x = bits_float(b);
      if (b == 0x7f7fffffu) continue;  // max: covered by FormatUlpOf.EveryFinite... rule
      const double gap = static_cast<double>(std::nextafterf(x, INFINITY)) - x;
      ASSERT_EQ(ulp_of(Format::fp32, x), gap) << describe(Format::fp32, b);
    }
  }
  EXPECT_EQ(ulp_of(Format::fp32, 0x1.fffffep127), 0x1p104);  // 2^(127-24+1)
}

// ---- fp32 rounding from double against the hardware cast -------------------------

// (float)d rounds to nearest even on x86-64 and aarch64 (default mode, no flush to zero;
// IEEE conversion, so values beyond the overflow threshold give ±Inf).
// 10^6 doubles: uniformly random exponents over fp32's range and beyond (subnormals,
// overflow, underflow) with random 52-bit mantissas; ties built on purpose (the midpoint
// of a random fp32 value and its neighbour) and the doubles next to them.
TEST(FormatRoundFp32, AgreesWithFloatCastOnAMillionDoubles) {
  std::mt19937_64 rng(kSeed);
  int ties_down = 0, ties_up = 0;  // ties that went to b and to b + 1 (by parity)
  auto check = [&](double d) {
    const Bits got = round_nearest_even(Format::fp32, d);
    const Bits want = float_bits(static_cast<float>(d));
    return got == want ? ::testing::AssertionSuccess()
                       : ::testing::AssertionFailure()
                             << "seed " << kSeed << ": round_nearest_even(fp32, " << hexd(d)
                             << ") = " << describe(Format::fp32, got) << ", (float) cast "
                             << describe(Format::fp32, want);
  };
  for (int i = 0; i < 500000; ++i) {
    const uint64_t mant = rng() & ((uint64_t{1} << 52) - 1);
    const int exp = static_cast<int>(rng() % 320) - 170;  // [-170, 149]
    double d = std::ldexp(1.0 + std::ldexp(static_cast<double>(mant), -52), exp);
    if (rng() & 1) d = -d;
    ASSERT_TRUE(check(d));
  }
  for (int i = 0; i < 166667; ++i) {
    Bits b = static_cast<Bits>(rng()) & 0x7fffffffu;
    if (b >= 0x7f800000u) b -= 0x7f800000u;  // finite
    const double lo = bits_float(b);
    const double hi = b == 0x7f7fffffu ? 0x1p128 : static_cast<double>(bits_float(b + 1));
    const double s = (rng() & 1) ? -1.0 : 1.0;
    const double mid = s * (lo + (hi - lo) / 2);
    ASSERT_TRUE(check(mid));
    ASSERT_TRUE(check(std::nextafter(mid, 1e300)));
    ASSERT_TRUE(check(std::nextafter(mid, -1e300)));
    const Bits mag = round_nearest_even(Format::fp32, mid) & 0x7fffffffu;
    ties_down += mag == b;
    ties_up += mag == b + 1;
  }
  // Not vacuous: the midpoints are real ties and both parities occur.
  EXPECT_EQ(ties_down + ties_up, 166667);
  EXPECT_GT(ties_down, 50000);
  EXPECT_GT(ties_up, 50000);
}

// round_value's and round_nearest_even's inline fast path (a normal binade of the format,
// rounded in the double's own bits) against the general path: bit for bit, the sign of zero
// and ±Inf included, for every format, on 400,000 random doubles with exponents over and
// beyond each format's range, the ties (midpoints of two neighbours) and the doubles next to
// them, and the edges: the smallest normal's binade, max_finite and its overflow threshold.
TEST(FormatRoundValue, FastPathAgreesWithTheGeneralPath) {
  std::mt19937_64 rng(kSeed + 7);
  auto same = [](Format f, double d) {
    const double got = round_value(f, d), want = decode(f, round_nearest_even_general(f, d));
    uint64_t g, w;
    std::memcpy(&g, &got, 8);
    std::memcpy(&w, &want, 8);
    const Bits bits = round_nearest_even(f, d), want_bits = round_nearest_even_general(f, d);
    if (bits != want_bits) {
      return ::testing::AssertionFailure() << format_name(f) << ": round_nearest_even(" << hexd(d) << ") = "
                                           << hex_bits(f, bits) << ", general path " << hex_bits(f, want_bits);
    }
    return g == w || (std::isnan(got) && std::isnan(want))
               ? ::testing::AssertionSuccess()
               : ::testing::AssertionFailure() << format_name(f) << ": round_value(" << hexd(d) << ") = "
                                               << hexd(got) << ", general path " << hexd(want);
  };
  for (Format f : {Format::fp32, Format::bf16, Format::fp16, Format::int16_scaled}) {
    const FormatInfo& fi = format_info(f);
    for (int i = 0; i < 100000; ++i) {
      const uint64_t mant = rng() & ((uint64_t{1} << 52) - 1);
      const int exp = fi.emin - 30 + static_cast<int>(rng() % uint64_t(fi.emax - fi.emin + 60));
      double d = std::ldexp(1.0 + std::ldexp(static_cast<double>(mant), -52), exp);
      if (rng() & 1) d = -d;
      ASSERT_TRUE(same(f, d));
      // A tie: the midpoint of d's rounded value and its upper neighbour, and its neighbours.
      const Bits b = round_nearest_even(f, std::fabs(d));
      if (is_inf(f, b) || is_inf(f, next_up(f, b))) continue;
      const double mid = (decode(f, b) + decode(f, next_up(f, b))) / 2;
      ASSERT_TRUE(same(f, mid));
      ASSERT_TRUE(same(f, -mid));
      ASSERT_TRUE(same(f, std::nextafter(mid, 0.0)));
      ASSERT_TRUE(same(f, std::nextafter(mid, 1e300)));
    }
    const double edges[] = {std::ldexp(1.0, fi.emin), std::nextafter(std::ldexp(1.0, fi.emin), 0.0),
                            fi.max_finite, fi.max_finite + std::ldexp(1.0, fi.emax - fi.precision),  // + ulp/2: Inf
                            std::nextafter(fi.max_finite + std::ldexp(1.0, fi.emax - fi.precision), 0.0),
                            std::ldexp(1.0, fi.emax + 1), 0.0, -0.0,
                            std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()};
    for (double d : edges) {
      ASSERT_TRUE(same(f, d));
      ASSERT_TRUE(same(f, -d));
    }
  }
}

// decode's and ulp_of's inline fast paths (a normal value, moved into a double's fields) against
// their general paths, bit for bit (NaN patterns: NaN of the pattern's sign): decode over every
// 16-bit pattern of bf16 and fp16 and 2^20 random fp32 patterns plus fp32's edges; ulp_of over
// each of those values, their negatives, zero, subnormals, max_finite and beyond, Inf and NaN.
TEST(FormatDecode, FastPathsAgreeWithTheGeneralPaths) {
  auto same = [](double a, double b) {
    uint64_t x, y;
    std::memcpy(&x, &a, 8);
    std::memcpy(&y, &b, 8);
    return x == y || (std::isnan(a) && std::isnan(b) && std::signbit(a) == std::signbit(b));
  };
  std::mt19937_64 rng(kSeed + 13);
  for (Format f : {Format::fp32, Format::bf16, Format::fp16, Format::int16_scaled}) {
    const FormatInfo& fi = format_info(f);
    std::vector<Bits> patterns;
    if (fi.total_bits == 16) {
      for (Bits b = 0; b < 0x10000; ++b) patterns.push_back(b);
    } else {
      for (int i = 0; i < (1 << 20); ++i) patterns.push_back(Bits(rng()));
      for (Bits b : {0x0u, 0x1u, 0x7fffffu, 0x800000u, 0x7f7fffffu, 0x7f800000u, 0x7fc00000u, 0xff800001u}) {
        patterns.push_back(b);
        patterns.push_back(b | 0x80000000u);
      }
    }
    int64_t normal = 0;
    for (Bits b : patterns) {
      const double got = decode(f, b), want = decode_general(f, b);
      ASSERT_TRUE(same(got, want)) << format_name(f) << ": decode(" << hex_bits(f, b) << ") = " << hexd(got)
                                   << ", general path " << hexd(want);
      if (!std::isfinite(want)) continue;
      normal += std::fabs(want) >= std::ldexp(1.0, fi.emin);
      for (double v : {want, -want, want * 1.75, std::nextafter(want, 0.0)}) {
        ASSERT_TRUE(same(ulp_of(f, v), ulp_of_general(f, v)))
            << format_name(f) << ": ulp_of(" << hexd(v) << ") = " << hexd(ulp_of(f, v)) << ", general path "
            << hexd(ulp_of_general(f, v));
      }
    }
    EXPECT_GT(normal, int64_t(patterns.size()) / 2);  // not vacuous: most take the fast path
    for (double v : {0.0, 0x1p-1074, fi.min_subnormal, fi.max_finite, fi.max_finite * 2,
                     std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()}) {
      ASSERT_TRUE(same(ulp_of(f, v), ulp_of_general(f, v))) << format_name(f) << ": ulp_of(" << hexd(v) << ")";
      ASSERT_TRUE(same(ulp_of(f, -v), ulp_of_general(f, -v))) << format_name(f) << ": ulp_of(" << hexd(-v) << ")";
    }
  }
}

// round_values (the vectorised array form) equals round_value element by element, bit for bit,
// on arrays of ordinary values and on arrays with one special value (zero, a subnormal, NaN,
// ±Inf, an overflow) among them, which send its block of 64 through the second pass (arrays
// of 37, 101 and 165 elements: a part block, and the special in any of up to three blocks).
TEST(FormatRoundValues, ArrayFormEqualsRoundValue) {
  std::mt19937_64 rng(kSeed + 11);
  for (Format f : {Format::fp32, Format::bf16, Format::fp16, Format::int16_scaled}) {
    const FormatInfo& fi = format_info(f);
    const double specials[] = {0.0, -0.0, 0x1p-1030, std::numeric_limits<double>::quiet_NaN(),
                               std::numeric_limits<double>::infinity(), -fi.max_finite * 1.5, fi.min_subnormal * 3,
                               fi.max_finite + std::ldexp(1.0, fi.emax - fi.precision)};
    for (int trial = 0; trial < 200; ++trial) {
      std::vector<double> v(37 + size_t(trial % 3) * 64);
      for (double& x : v) {
        x = std::ldexp(1.0 + double(rng() >> 12) * 0x1p-52, fi.emin + int(rng() % uint64_t(fi.emax - fi.emin)));
        if (rng() & 1) x = -x;
      }
      if (trial % 2 == 1) v[rng() % v.size()] = specials[size_t(trial / 2) % std::size(specials)];
      std::vector<double> got = v;
      round_values(f, got.data(), int64_t(got.size()));
      for (size_t i = 0; i < v.size(); ++i) {
        const double want = round_value(f, v[i]);
        uint64_t g, w;
        std::memcpy(&g, &got[i], 8);
        std::memcpy(&w, &want, 8);
        ASSERT_TRUE(g == w || (std::isnan(got[i]) && std::isnan(want)))
            << format_name(f) << ": round_values at " << hexd(v[i]) << " gave " << hexd(got[i]) << ", round_value "
            << hexd(want);
      }
    }
  }
}

// representable(Format, float), inline with a bit test for bf16, against the double path: every
// 251st float pattern (every exponent and mantissa bit varies), every bf16 pattern widened
// to a float and its float neighbours, and ±0, ±Inf, NaN.
TEST(FormatRepresentable, FloatOverloadAgreesWithTheDoublePath) {
  int bf16_exact = 0;
  auto same = [&](Format f, float v) {
    const bool got = representable(f, v), want = representable(f, double(v));
    bf16_exact += f == Format::bf16 && got;
    return got == want ? ::testing::AssertionSuccess()
                       : ::testing::AssertionFailure() << format_name(f) << ": representable(" << hexd(v)
                                                       << "f) = " << got << ", double path " << want;
  };
  for (Format f : {Format::fp32, Format::bf16, Format::fp16, Format::int16_scaled}) {
    for (uint64_t b = 0; b < (uint64_t{1} << 32); b += 251) ASSERT_TRUE(same(f, bits_float(Bits(b))));
    for (Bits b = 0; b < 0x10000u; ++b) {
      const float v = bits_float(b << 16);
      ASSERT_TRUE(same(f, v));
      ASSERT_TRUE(same(f, std::nextafter(v, 0.0f)));
      ASSERT_TRUE(same(f, std::nextafter(v, 1e30f)));
    }
    for (float v : {0.0f, -0.0f, std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                    std::numeric_limits<float>::quiet_NaN()}) {
      ASSERT_TRUE(same(f, v));
    }
  }
  EXPECT_GT(bf16_exact, 65000);  // not vacuous: the widened bf16 patterns are exact
}

// int16_scaled: elements are the decoded fp32 value fl(q·d) (spec/format.h), so its element
// functions are fp32's; the codes' range is ±32767.
TEST(Int16Scaled, IsABlockScaledStateFormatWithAnFp32Carrier) {
  Format f;
  ASSERT_TRUE(parse_format("int16_scaled", f));
  EXPECT_EQ(f, Format::int16_scaled);
  EXPECT_EQ(format_name(f), "int16_scaled");
  EXPECT_FALSE(parse_format("int16", f)) << "only the explicit name: an int16 state means nothing without its scale";
  EXPECT_TRUE(block_scaled(Format::int16_scaled));
  for (Format g : kAll) EXPECT_FALSE(block_scaled(g)) << format_name(g);
  EXPECT_EQ(format_info(Format::int16_scaled).scaled_code_max, 32767);
  // The carrier: one fp32 pattern decodes, rounds and steps as in fp32.
  const Bits one = 0x3f800000u;
  EXPECT_EQ(decode(Format::int16_scaled, one), 1.0);
  EXPECT_EQ(round_nearest_even(Format::int16_scaled, 1.0 + 0x1p-25), one);  // below half an fp32 ULP
  EXPECT_EQ(next_up(Format::int16_scaled, one), 0x3f800001u);
  EXPECT_EQ(ulp_of(Format::int16_scaled, 1.0), 0x1p-23);
}

TEST(Int16Scaled, DecodeIsTheFp32ProductOfCodeAndScale) {
  const Format f = Format::int16_scaled;
  // 32767 · 2^-15 is exact in fp32 (15 significant bits).
  EXPECT_EQ(decode_scaled(f, 32767, 0x1p-15f), 32767.0 / 32768.0);
  EXPECT_EQ(decode_scaled(f, -32767, 0x1p-15f), -32767.0 / 32768.0);
  // 5·(1 + 2^-23) = 5 + 5·2^-23 = 5 + 1.25 ULP(5) (ULP(5) = 2^-21): rounds to 5 + 2^-21.
  EXPECT_EQ(decode_scaled(f, 5, 1.0f + 0x1p-23f), 5.0 + 0x1p-21);
  // 3·(1 + 2^-23) = 3 + 1.5 ULP(3) (ULP(3) = 2^-22): a tie, to the even 3 + 2·2^-22.
  EXPECT_EQ(decode_scaled(f, 3, 1.0f + 0x1p-23f), 3.0 + 0x1p-21);
  EXPECT_EQ(decode_scaled(f, 0, 1.0f), 0.0);
  EXPECT_EQ(decode_scaled(f, 7, 0.0f), 0.0);  // a row whose encode scale overflowed stores d = 0
  // -32768 and beyond are no values of the format (the kernel clips to ±32767).
  EXPECT_TRUE(std::isnan(decode_scaled(f, -32768, 1.0f)));
  EXPECT_TRUE(std::isnan(decode_scaled(f, 32768, 1.0f)));
  EXPECT_THROW(decode_scaled(Format::fp32, 1, 1.0f), std::invalid_argument);
}

}  // namespace
}  // namespace ssmv
