// The number formats ssmv speaks: fp32, bf16 and fp16 (IEEE-754 binary32, bfloat16,
// binary16), and one block-scaled integer format for states, int16_scaled. One
// implementation of decoding, encoding, round-to-nearest-even, next/prev and ULP distance
// that every part of ssmv calls. No MPFR here: rounding an MPFR value lives in
// reference/round.h and goes through round_to_odd + round_nearest_even below.
//
// int16_scaled (FlashInfer's `selective_state_update(..., state_scale=...)`, docs/contracts.md
// "Scaled 16-bit integer states"): a block of elements — a state row, the last axis — is stored
// as integer codes q in [-32767, 32767] and one fp32 decode scale d ≥ 0; an element's value is
// the fp32 product fl(q·d), what every reader of the state computes before using it. ssmv
// holds and compares such elements as that decoded fp32 value: its FormatInfo is fp32's (the
// carrier), so decode, rounding, next/prev and ULPs below are fp32's; decode_scaled makes the
// value from a code and its scale, and the rounding error of a store (which needs the block's
// magnitude) is verify/bound/error_model.h's rounding_error_at_most.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>

namespace ssmv {

enum class Format : uint8_t { fp32, bf16, fp16, int16_scaled };

// A bit pattern of a format, held in the low `total_bits` bits.
using Bits = uint32_t;

struct FormatInfo {
  std::string_view name;  // "fp32", "bf16", "fp16"
  int total_bits;         // 32, 16, 16
  int precision;          // significand bits with the implicit one: 24, 8, 11
  int exponent_bits;      // 8, 8, 5
  int emax;               // exponent of the largest finite value: 127, 127, 15
  int emin;               // exponent of the smallest normal value: -126, -126, -14
  double unit_roundoff;   // u = 2^-precision: 2^-24, 2^-8, 2^-11
  double max_finite;      // (2 - 2^(1-p)) * 2^emax
  double min_subnormal;   // 2^(emin - p + 1): 2^-149, 2^-133, 2^-24
  // Block-scaled formats only (int16_scaled: 32767): the largest |code|; 0 for IEEE formats.
  // The fields above are then those of the decoded value's carrier (fp32).
  int32_t scaled_code_max = 0;
};

// The formats' facts, indexed by Format (one table: format.cpp's format_info reads it too).
inline constexpr FormatInfo kFormatInfos[4] = {
    {"fp32", 32, 24, 8, 127, -126, 0x1p-24, 0x1.fffffep127, 0x1p-149},
    {"bf16", 16, 8, 8, 127, -126, 0x1p-8, 0x1.fep127, 0x1p-133},
    {"fp16", 16, 11, 5, 15, -14, 0x1p-11, 65504.0, 0x1p-24},
    // Decoded values are fp32 values: fp32's fields, plus the code range.
    {"int16_scaled", 32, 24, 8, 127, -126, 0x1p-24, 0x1.fffffep127, 0x1p-149, 32767},
};
static_assert(static_cast<int>(Format::fp32) == 0 && static_cast<int>(Format::bf16) == 1 &&
              static_cast<int>(Format::fp16) == 2 && static_cast<int>(Format::int16_scaled) == 3);

const FormatInfo& format_info(Format f);
std::string_view format_name(Format f);
// Parses "fp32"/"float32"/"f32", "bf16"/"bfloat16", "fp16"/"float16"/"f16", "int16_scaled".
bool parse_format(std::string_view text, Format& out);

// True for a block-scaled integer format (int16_scaled): a state format only.
bool block_scaled(Format f);
// The value of code q of a block-scaled format with its block's decode scale d: the fp32
// product fl(q·d) rounded to nearest even (FlashInfer: `toFloat(int16) * state_decode_scale`,
// kernel_selective_state_update_stp.cuh:227), as a float. NaN for a code outside
// [-scaled_code_max, scaled_code_max] (-32768 is no value of the format: the kernel clips to
// ±32767, conversion.cuh:88-92), so a kernel's out-of-range code is judged INVALID.
float decode_scaled(Format f, int64_t code, float scale);

// Exact value of a bit pattern (every format value is a double). NaN patterns decode
// to a quiet NaN with the pattern's sign. Inline, with a fast path for a normal value (the
// judge decodes every element, the sharp verdict every kept one): its sign, exponent and
// significand moved into a double's fields; zero, subnormals, Inf and NaN take decode_general.
double decode_general(Format f, Bits bits);
inline double decode(Format f, Bits bits) {
  const FormatInfo& fi = kFormatInfos[static_cast<int>(f)];
  const int m = fi.precision - 1;
  const Bits e = (bits >> m) & ((Bits{1} << fi.exponent_bits) - 1);
  if (e == 0 || e == (Bits{1} << fi.exponent_bits) - 1) return decode_general(f, bits);
  const uint64_t b = (uint64_t((bits >> (fi.total_bits - 1)) & 1) << 63) |
                     (uint64_t(int(e) - fi.emax + 1023) << 52) |  // biased exponent: emax is the bias
                     (uint64_t(bits & ((Bits{1} << m) - 1)) << (52 - m));
  double v;
  std::memcpy(&v, &b, sizeof v);
  return v;
}

// Round-to-nearest, ties-to-even of a double to the format: overflow gives ±Inf
// (at and above max_finite + ulp(max_finite)/2), underflow keeps the sign of zero,
// NaN gives the canonical quiet NaN (sign 0, top mantissa bit). Correct for every
// double input (no double rounding: the double is the exact value being rounded).
// Inline, with round_value's fast path below for a double in one of the format's normal
// binades (the reference's fast tier asks it six times of every value it settles, the judge
// once per element); everything else takes round_nearest_even_general.
Bits round_nearest_even_general(Format f, double v);
inline Bits round_nearest_even(Format f, double v);

// The double nearest to round_nearest_even(f, v): decode(f, round_nearest_even(f, v)).
// Inline, with a fast path for the common case, since the sharp verdict's emulation rounds
// every state element of every token (tens of millions of calls per check): a normal double
// whose binade is one of the format's normal binades is rounded in its own bits — add half
// the dropped quantum minus one plus the kept lowest bit (ties to even), clear the dropped
// bits; a carry into the exponent field is the next binade, and past emax it is ±Inf, as
// round_nearest_even gives at and above max_finite + ulp/2. Integer arithmetic only, so the
// dynamic rounding mode does not matter. Everything else (zero, subnormal results, NaN, Inf)
// takes round_value_general.
double round_value_general(Format f, double v);
namespace detail {
// The fast path's rounding of a double's bits b to `precision` significant bits, to nearest,
// ties to even (meaningful when b's binade is a normal binade of the format).
inline uint64_t round_bits(uint64_t b, int precision) {
  const int drop = 53 - precision;  // 29 (fp32), 45 (bf16), 42 (fp16)
  return (b + ((uint64_t{1} << (drop - 1)) - 1) + ((b >> drop) & 1)) & ~((uint64_t{1} << drop) - 1);
}
// The bits of the rounded double when v's binade is a normal binade of the format, else
// false. A result past emax has an exponent above it (±Inf).
inline bool round_in_normal_binade(const FormatInfo& fi, double v, uint64_t& b) {
  std::memcpy(&b, &v, sizeof b);
  const int e = int((b >> 52) & 0x7ff) - 1023;
  if (e < fi.emin || e > fi.emax) return false;
  b = round_bits(b, fi.precision);
  return true;
}
}  // namespace detail
inline double round_value(Format f, double v) {
  const FormatInfo& fi = kFormatInfos[static_cast<int>(f)];
  uint64_t b;
  if (!detail::round_in_normal_binade(fi, v, b)) return round_value_general(f, v);
  if (int((b >> 52) & 0x7ff) - 1023 > fi.emax) return (b >> 63) ? -std::numeric_limits<double>::infinity()
                                                                 : std::numeric_limits<double>::infinity();
  double r;
  std::memcpy(&r, &b, sizeof r);
  return r;
}
inline Bits round_nearest_even(Format f, double v) {
  const FormatInfo& fi = kFormatInfos[static_cast<int>(f)];
  uint64_t b;
  if (!detail::round_in_normal_binade(fi, v, b)) return round_nearest_even_general(f, v);
  const Bits sign = Bits(b >> 63) << (fi.total_bits - 1);
  const int e = int((b >> 52) & 0x7ff) - 1023, m = fi.precision - 1;
  if (e > fi.emax) return sign | (((Bits{1} << fi.exponent_bits) - 1) << m);  // ±Inf
  const Bits mantissa = Bits(b >> (52 - m)) & ((Bits{1} << m) - 1);
  return sign | (Bits(e + fi.emax) << m) | mantissa;  // biased exponent: e + emax
}

// round_value over an array in place: v[i] = round_value(f, v[i]) for i < n, with the fast
// path written without branches so that the loop vectorises (the sharp verdict's emulation
// stores every state element of every token); a lane outside it (zero, subnormal, NaN, Inf,
// an overflow) is left as it was and its block of 64 is redone by round_value in a second
// pass (one zero in a state of 8192 had sent all of it through the scalar path). Rounding is
// idempotent, so the second pass may revisit every element of the block. Compiled for AVX-512,
// AVX2 and baseline x86-64 (format.cpp, SSMV_VECTOR_CLONES): SSE2 has no 64-bit compare, so
// the baseline loop runs scalar. (It had been an inline function, and GCC kept it out of line
// in the baseline target, scalar, even when called from the emulation's AVX2 clones.)
void round_values(Format f, double* v, int64_t n);

// True when v is a value of the format (finite or infinite; NaN is not).
bool representable(Format f, double v);
// The same for a float, inline: validating a dump's tensors (67 M state elements in a
// 256-request decode step) asks it of every element. Every float is an fp32 value (and an
// int16_scaled element is its decoded fp32 value); a float is a bf16 value exactly when its
// low 16 bits are zero (bf16 is fp32's top half: same exponent range, subnormals included).
inline bool representable(Format f, float v) {
  if (v != v) return false;
  uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  switch (f) {
    case Format::fp32:
    case Format::int16_scaled: return true;
    case Format::bf16: return (b & 0xffffu) == 0;
    case Format::fp16: break;
  }
  return representable(f, double(v));
}

// Bits of a value that must be representable; throws std::invalid_argument otherwise.
Bits encode_exact(Format f, double v);

bool is_nan(Format f, Bits b);
bool is_inf(Format f, Bits b);
bool is_zero(Format f, Bits b);
bool is_subnormal(Format f, Bits b);
bool sign_bit(Format f, Bits b);

// IEEE nextUp / nextDown: next_up(-0) = next_up(+0) = +min_subnormal, next_up(+max) = +Inf,
// next_up(+Inf) = +Inf, next_up(-min_subnormal) = -0; NaN stays NaN.
Bits next_up(Format f, Bits b);
Bits next_down(Format f, Bits b);

// Position on the ordered-integer line: monotone in the value, +0 and -0 both at 0,
// neighbours one apart, ±Inf one beyond ±max_finite. Inline, as ulp_distance below.
inline int64_t ordered_index(Format f, Bits b) {
  const Bits sign = Bits{1} << (kFormatInfos[static_cast<int>(f)].total_bits - 1);
  const int64_t mag = static_cast<int64_t>(b & ~sign);
  return (b & sign) ? -mag : mag;
}

// The ULP distance: |ordered_index(a) - ordered_index(b)|, the number of format values
// stepped over going from a to b. +0 and -0 are 0 apart (compare encodings when the sign
// of zero matters). Either argument NaN: kNanUlpDistance. Inline: the judge asks it of every
// element (a 256-request decode dump's final states are 67 M of them).
inline constexpr int64_t kNanUlpDistance = std::numeric_limits<int64_t>::max();
inline int64_t ulp_distance(Format f, Bits a, Bits b) {
  const FormatInfo& fi = kFormatInfos[static_cast<int>(f)];
  const Bits sign = Bits{1} << (fi.total_bits - 1);
  const Bits inf = ((Bits{1} << fi.exponent_bits) - 1) << (fi.precision - 1);
  if ((a & ~sign) > inf || (b & ~sign) > inf) return kNanUlpDistance;  // is_nan
  const int64_t d = ordered_index(f, a) - ordered_index(f, b);
  return d < 0 ? -d : d;
}

// Spacing of the format's values at |v|: 2^(max(e, emin) - p + 1) with e = floor(log2|v|);
// for v = 0 the subnormal spacing; for |v| above max_finite (also ±Inf) and for NaN, the
// spacing at max_finite. Inline, with a fast path for |v| in the format's normal range (the
// judge asks it of every element's magnitude): v's binade exponent lowered by p − 1 in a
// double's bits (2^(e − p + 1) is a normal double for every format here).
double ulp_of_general(Format f, double v);
inline double ulp_of(Format f, double v) {
  const FormatInfo& fi = kFormatInfos[static_cast<int>(f)];
  uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  const int e = int((b >> 52) & 0x7ff) - 1023;
  if (e < fi.emin || !(std::fabs(v) <= fi.max_finite)) return ulp_of_general(f, v);
  const uint64_t r = uint64_t(e - fi.precision + 1 + 1023) << 52;
  double u;
  std::memcpy(&u, &r, sizeof u);
  return u;
}

// Hex of the pattern, e.g. "0x3f80" (bf16) or "0x3f800000" (fp32).
std::string hex_bits(Format f, Bits b);

}  // namespace ssmv
