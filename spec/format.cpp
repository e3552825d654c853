#include "spec/format.h"

#include <cfenv>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace ssmv {
namespace {

constexpr FormatInfo kFp32{"fp32", 32, 24, 8, 127, -126, 0x1p-24, 0x1.fffffep127, 0x1p-149};
constexpr FormatInfo kBf16{"bf16", 16, 8, 8, 127, -126, 0x1p-8, 0x1.fep127, 0x1p-133};
constexpr FormatInfo kFp16{"fp16", 16, 11, 5, 15, -14, 0x1p-11, 65504.0, 0x1p-24};

Bits sign_mask(const FormatInfo& fi) { return Bits{1} << (fi.total_bits - 1); }
Bits mantissa_bits(const FormatInfo& fi) { return fi.precision - 1; }
Bits mantissa_mask(const FormatInfo& fi) { return (Bits{1} << mantissa_bits(fi)) - 1; }
Bits exponent_all_ones(const FormatInfo& fi) { return (Bits{1} << fi.exponent_bits) - 1; }
Bits inf_bits(const FormatInfo& fi) { return exponent_all_ones(fi) << mantissa_bits(fi); }
int bias(const FormatInfo& fi) { return fi.emax; }

// Encodes a finite non-negative value known to be representable.
Bits encode_magnitude(const FormatInfo& fi, double a) {
  if (a == 0.0) return 0;
  int e = std::ilogb(a);
  if (e < fi.emin) {  // subnormal: a = m * 2^(emin - p + 1), m < 2^(p-1)
    return static_cast<Bits>(std::ldexp(a, -(fi.emin - fi.precision + 1)));
  }
  Bits m = static_cast<Bits>(std::ldexp(a, -(e - fi.precision + 1))) & mantissa_mask(fi);
  return (static_cast<Bits>(e + bias(fi)) << mantissa_bits(fi)) | m;
}

}  // namespace

const FormatInfo& format_info(Format f) {
  switch (f) {
    case Format::fp32: return kFp32;
    case Format::bf16: return kBf16;
    case Format::fp16: return kFp16;
  }
  throw std::invalid_argument("format_info: unknown format");
}

std::string_view format_name(Format f) { return format_info(f).name; }

bool parse_format(std::string_view t, Format& out) {
  if (t == "fp32" || t == "float32" || t == "f32" || t == "F32") { out = Format::fp32; return true; }
  if (t == "bf16" || t == "bfloat16" || t == "BF16") { out = Format::bf16; return true; }
  if (t == "fp16" || t == "float16" || t == "f16" || t == "F16") { out = Format::fp16; return true; }
  return false;
}

double decode(Format f, Bits bits) {
  const FormatInfo& fi = format_info(f);
  const bool neg = (bits & sign_mask(fi)) != 0;
  const Bits e = (bits >> mantissa_bits(fi)) & exponent_all_ones(fi);
  const Bits m = bits & mantissa_mask(fi);
  double v;
  if (e == exponent_all_ones(fi)) {
    v = m == 0 ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  } else if (e == 0) {
    v = std::ldexp(static_cast<double>(m), fi.emin - fi.precision + 1);
  } else {
    v = std::ldexp(static_cast<double>(m | (Bits{1} << mantissa_bits(fi))),
                   static_cast<int>(e) - bias(fi) - fi.precision + 1);
  }
  return neg ? -v : v;
}

Bits round_nearest_even(Format f, double v) {
  const FormatInfo& fi = format_info(f);
  if (std::isnan(v)) return inf_bits(fi) | (Bits{1} << (mantissa_bits(fi) - 1));
  const Bits sign = std::signbit(v) ? sign_mask(fi) : 0;
  const double a = std::fabs(v);
  if (std::isinf(a)) return sign | inf_bits(fi);
  if (a == 0.0) return sign;
  const int e = std::ilogb(a);
  if (e > fi.emax) return sign | inf_bits(fi);
  // quantum: the spacing of the format at a (subnormal spacing below emin).
  const int q = (e < fi.emin ? fi.emin : e) - fi.precision + 1;
  // a / 2^q < 2^p is exact in double; nearbyint rounds ties to even in the default mode.
  const double scaled = std::ldexp(a, -q);
  const int saved = std::fegetround();
  if (saved != FE_TONEAREST) std::fesetround(FE_TONEAREST);
  const double r = std::nearbyint(scaled);
  if (saved != FE_TONEAREST) std::fesetround(saved);
  const double rounded = std::ldexp(r, q);
  if (rounded > fi.max_finite) return sign | inf_bits(fi);
  return sign | encode_magnitude(fi, rounded);
}

double round_value(Format f, double v) { return decode(f, round_nearest_even(f, v)); }

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

int64_t ordered_index(Format f, Bits b) {
  const FormatInfo& fi = format_info(f);
  const int64_t mag = static_cast<int64_t>(b & ~sign_mask(fi));
  return (b & sign_mask(fi)) ? -mag : mag;
}

int64_t ulp_distance(Format f, Bits a, Bits b) {
  if (is_nan(f, a) || is_nan(f, b)) return kNanUlpDistance;
  const int64_t d = ordered_index(f, a) - ordered_index(f, b);
  return d < 0 ? -d : d;
}

double ulp_of(Format f, double v) {
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

}  // namespace ssmv
