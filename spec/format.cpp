#include "spec/format.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "spec/vector_clones.h"

namespace ssmv {
namespace {

Bits sign_mask(const FormatInfo& fi) { return Bits{1} << (fi.total_bits - 1); }
Bits mantissa_bits(const FormatInfo& fi) { return fi.precision - 1; }
Bits mantissa_mask(const FormatInfo& fi) { return (Bits{1} << mantissa_bits(fi)) - 1; }
Bits exponent_all_ones(const FormatInfo& fi) { return (Bits{1} << fi.exponent_bits) - 1; }
Bits inf_bits(const FormatInfo& fi) { return exponent_all_ones(fi) << mantissa_bits(fi); }
int bias(const FormatInfo& fi) { return fi.emax; }

// 2^k as a double from its exponent field, k in [−1022, 1023] (ldexp without the libm call).
double pow2(int k) {
  const uint64_t b = uint64_t(k + 1023) << 52;
  double d;
  std::memcpy(&d, &b, sizeof d);
  return d;
}

}  // namespace

const FormatInfo& format_info(Format f) {
  switch (f) {
    case Format::fp32:
    case Format::bf16:
    case Format::fp16:
    case Format::int16_scaled: return kFormatInfos[static_cast<int>(f)];
  }
  throw std::invalid_argument("format_info: unknown format");
}

std::string_view format_name(Format f) { return format_info(f).name; }

bool parse_format(std::string_view t, Format& out) {
  if (t == "fp32" || t == "float32" || t == "f32" || t == "F32") { out = Format::fp32; return true; }
  if (t == "bf16" || t == "bfloat16" || t == "BF16") { out = Format::bf16; return true; }
  if (t == "fp16" || t == "float16" || t == "f16" || t == "F16") { out = Format::fp16; return true; }
  if (t == "int16_scaled") { out = Format::int16_scaled; return true; }
  return false;
}

bool block_scaled(Format f) { return format_info(f).scaled_code_max != 0; }

float decode_scaled(Format f, int64_t code, float scale) {
  const int64_t m = format_info(f).scaled_code_max;
  if (m == 0) throw std::invalid_argument("decode_scaled: " + std::string(format_name(f)) + " is not block-scaled");
  if (code < -m || code > m) return std::numeric_limits<float>::quiet_NaN();
  // float(code) is exact (|code| < 2^24); the product is one fp32 rounding to nearest even.
  return float(code) * scale;
}

double decode_general(Format f, Bits bits) {
  const FormatInfo& fi = format_info(f);
  const bool neg = (bits & sign_mask(fi)) != 0;
  const Bits e = (bits >> mantissa_bits(fi)) & exponent_all_ones(fi);
  const Bits m = bits & mantissa_mask(fi);
  double v;
  if (e == exponent_all_ones(fi)) {
    v = m == 0 ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  } else if (e == 0) {
    v = static_cast<double>(m) * pow2(fi.emin - fi.precision + 1);  // exact: m < 2^23
  } else {
    v = static_cast<double>(m | (Bits{1} << mantissa_bits(fi))) *
        pow2(static_cast<int>(e) - bias(fi) - fi.precision + 1);
  }
  return neg ? -v : v;
}

Bits round_nearest_even_general(Format f, double v) {
  const FormatInfo& fi = format_info(f);
  uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  const Bits sign = (b >> 63) ? sign_mask(fi) : 0;
  const int field = int((b >> 52) & 0x7ff);
  if (field == 0x7ff) {  // NaN: the canonical quiet NaN; ±Inf
    return (b << 12) != 0 ? inf_bits(fi) | (Bits{1} << (mantissa_bits(fi) - 1)) : sign | inf_bits(fi);
  }
  if ((b << 1) == 0) return sign;  // ±0
  // A normal double is m·2^(e−52) with m < 2^53 (implicit bit included); a subnormal double
  // (below 2^-1022, under every format's smallest subnormal/2) is m·2^-1074.
  const uint64_t m = field != 0 ? (b & ((uint64_t{1} << 52) - 1)) | (uint64_t{1} << 52) : b & ((uint64_t{1} << 52) - 1);
  const int e = field != 0 ? field - 1023 : -1022;  // exponent of m's top position
  // The quantum of the result: 2^q, q = max(e, emin) − p + 1 (subnormal spacing below emin).
  const int q = (e < fi.emin ? fi.emin : e) - fi.precision + 1;
  const int drop = q - (e - 52);  // low bits of m below the quantum: ≥ 29 for every format
  uint64_t r;
  if (drop > 54) {
    r = 0;  // v < 2^(q−1): below half the quantum
  } else {
    r = m >> drop;
    const uint64_t rest = m & ((uint64_t{1} << drop) - 1), half = uint64_t{1} << (drop - 1);
    if (rest > half || (rest == half && (r & 1))) ++r;  // to nearest, ties to even
  }
  // r·2^q with r ≤ 2^p: its encoding is r plus the exponent field above the subnormal
  // quantum's (a carry of r into the field is the next binade, as in the encoding).
  const uint64_t mag = r + (uint64_t(q - (fi.emin - fi.precision + 1)) << mantissa_bits(fi));
  return mag >= inf_bits(fi) ? sign | inf_bits(fi) : sign | Bits(mag);
}

double round_value_general(Format f, double v) { return decode(f, round_nearest_even(f, v)); }

bool representable(Format f, double v) {
  if (std::isnan(v)) return false;
  return decode(f, round_nearest_even(f, v)) == v;
}

Bits encode_exact(Format f, double v) {
  if (!representable(f, v)) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "value %a is not representable in %s", v,
                  std::string(format_name(f)).c_str());
    throw std::invalid_argument(buf);
  }
  return round_nearest_even(f, v);
}

bool is_nan(Format f, Bits b) {
  const FormatInfo& fi = format_info(f);
  return (b & ~sign_mask(fi)) > inf_bits(fi);
}
bool is_inf(Format f, Bits b) {
  const FormatInfo& fi = format_info(f);
  return (b & ~sign_mask(fi)) == inf_bits(fi);
}
bool is_zero(Format f, Bits b) { return (b & ~sign_mask(format_info(f))) == 0; }
bool is_subnormal(Format f, Bits b) {
  const FormatInfo& fi = format_info(f);
  const Bits mag = b & ~sign_mask(fi);
  return mag != 0 && mag < (Bits{1} << mantissa_bits(fi));
}
bool sign_bit(Format f, Bits b) { return (b & sign_mask(format_info(f))) != 0; }

Bits next_up(Format f, Bits b) {
  const FormatInfo& fi = format_info(f);
  if (is_nan(f, b)) return b;
  const Bits mag = b & ~sign_mask(fi);
  if (mag == 0) return 1;                    // ±0 -> +min_subnormal
  if (b & sign_mask(fi)) return b - 1;       // negative: towards zero (-min_sub -> -0)
  if (mag == inf_bits(fi)) return b;         // +Inf stays
  return b + 1;                              // +max -> +Inf by the encoding's order
}

Bits next_down(Format f, Bits b) {
  const Bits s = sign_mask(format_info(f));
  if (is_nan(f, b)) return b;
  return next_up(f, b ^ s) ^ s;
}

double ulp_of_general(Format f, double v) {
  const FormatInfo& fi = format_info(f);
  double a = std::fabs(v);
  if (!(a <= fi.max_finite)) a = fi.max_finite;  // also NaN
  const int e = a == 0.0 ? fi.emin : std::ilogb(a);
  return std::ldexp(1.0, (e < fi.emin ? fi.emin : e) - fi.precision + 1);
}

std::string hex_bits(Format f, Bits b) {
  char buf[16];
  std::snprintf(buf, sizeof buf, format_info(f).total_bits == 32 ? "0x%08x" : "0x%04x", b);
  return buf;
}

SSMV_VECTOR_CLONES void round_values(Format f, double* v, int64_t n) {
  const FormatInfo& fi = kFormatInfos[static_cast<int>(f)];
  // Magnitudes compared as signed 64-bit integers (they are below 2^63): AVX2 has a signed
  // 64-bit compare only, and the unsigned form measured 10 % slower.
  const int64_t lo = int64_t(fi.emin + 1023) << 52, hi = int64_t(fi.emax + 1024) << 52;  // |v| in [2^emin, 2^(emax+1))
  const int64_t magnitude = ~(int64_t{1} << 63);
  constexpr int64_t kBlock = 64;
  for (int64_t i0 = 0; i0 < n; i0 += kBlock) {
    const int64_t end = i0 + kBlock < n ? i0 + kBlock : n;
    int64_t outside = 0;
    for (int64_t i = i0; i < end; ++i) {
      int64_t b;
      std::memcpy(&b, &v[i], sizeof b);
      const int64_t a = b & magnitude;
      const int64_t r = int64_t(detail::round_bits(uint64_t(b), fi.precision));
      const int64_t ok = int64_t(a >= lo) & int64_t(a < hi) & int64_t((r & magnitude) < hi);
      const int64_t out = ok ? r : b;
      std::memcpy(&v[i], &out, sizeof out);
      outside |= ok ^ 1;
    }
    if (outside == 0) continue;
    for (int64_t i = i0; i < end; ++i) v[i] = round_value(f, v[i]);
  }
}

}  // namespace ssmv
