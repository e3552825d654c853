#include "fast/chunk_scan/mma_model.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>

namespace ssmv::chunk_scan {
namespace {

// Measured on the H200 (2026-11-30, 7.2 M outputs, bench/NOTES.md): the truncation grid
// 2^(E−26) never falls below 2^-158, as if E were clamped to −132 from below. Only sums of
// products under 2^-132 notice: their results lie in or near fp32's subnormal range.
constexpr int kMinAlignExponent = -132;

// Rounds m·2^q (m an integer, |m| < 2^40) toward zero to fp32, including the subnormal
// range (multiples of 2^-149) and overflow (toward zero gives ±FLT_MAX).
float round_toward_zero(int64_t m, int q) {
  if (m == 0) return 0.0f;  // a zero result is +0 (measured: see mma_step)
  const bool negative = m < 0;
  uint64_t mag = negative ? uint64_t(-m) : uint64_t(m);
  const int bits = 64 - __builtin_clzll(mag);
  // Exponent of the leading bit: bits-1+q. Keep 24 significant bits for a normal result,
  // fewer where the result falls below 2^-126 (keep bits down to 2^-149).
  const int lead = bits - 1 + q;
  int keep_lsb = lead - 23;          // exponent of the last kept bit for a normal result
  if (keep_lsb < -149) keep_lsb = -149;
  const int drop = keep_lsb - q;     // low bits of mag to drop
  if (drop > 0) {
    if (drop >= 64) return 0.0f;  // below the subnormal range: +0, whatever the sign
    mag = (mag >> drop) << drop;
    if (mag == 0) return 0.0f;
  }
  if (lead > 127) {
    const float m = 0x1.fffffep127f;
    return negative ? -m : m;
  }
  // mag·2^q has at most 24 significant bits and lies in fp32's range: exact in double
  // and in float.
  const double v = std::ldexp(double(mag), q);
  return float(negative ? -v : v);
}

// The exponent a value's exponent field reads: floor(log2|v|), or emin for a subnormal.
int exponent_field(float v, int emin) {
  const int e = std::ilogb(v);
  return e < emin ? emin : e;
}

}  // namespace

float mma_step(const float* a, const float* b, int count, float c, MmaOperands ops) {
  const int emin = format_info(ops.format).emin;
  double term[17];
  int ref[17];
  int n = 0;
  for (int k = 0; k < count; ++k) {
    // bf16·bf16 has 16 significant bits, fp16·fp16 22: exact in double.
    const double p = double(a[k]) * double(b[k]);
    if (p == 0.0) continue;
    if (ops.rule == SubnormalRule::flush &&
        (std::ilogb(a[k]) < emin || std::ilogb(b[k]) < emin)) {
      continue;
    }
    term[n] = p;
    ref[n] = ops.rule == SubnormalRule::true_exponent ? std::ilogb(a[k]) + std::ilogb(b[k]) + 1
                                                       : exponent_field(a[k], emin) + exponent_field(b[k], emin) + 1;
    ++n;
  }
  // All products zero: c passes unchanged, except that a zero comes out as +0 (see the header).
  if (n == 0) return c == 0.0f ? 0.0f : c;
  if (c != 0.0f) {
    term[n] = c;
    // A subnormal c also reads its exponent field: e(c) = max(floor(log2|c|), −126).
    ref[n] = exponent_field(c, format_info(Format::fp32).emin) + 1;
    ++n;
  }
  // The alignment exponent is at least kMinAlignExponent: no term keeps bits below 2^-158.
  int E = kMinAlignExponent;
  for (int i = 0; i < n; ++i) E = ref[i] > E ? ref[i] : E;
  // Each |term| < 2^(ref+1) ≤ 2^(E+1): truncated to multiples of 2^(E−26) it is an integer
  // below 2^27 in those units; 17 of them sum below 2^32 — exact in int64.
  int64_t sum = 0;
  for (int i = 0; i < n; ++i) {
    sum += int64_t(std::trunc(std::ldexp(term[i], 26 - E)));
  }
  return round_toward_zero(sum, E - 26);
}

float mma_chain(const float* a, std::ptrdiff_t a_stride, const float* b, std::ptrdiff_t b_stride,
                int len, float acc, MmaOperands ops) {
  float av[16], bv[16];
  for (int k0 = 0; k0 < len; k0 += 16) {
    const int count = len - k0 < 16 ? len - k0 : 16;
    for (int k = 0; k < count; ++k) {
      av[k] = a[(k0 + k) * a_stride];
      bv[k] = b[(k0 + k) * b_stride];
    }
    acc = mma_step(av, bv, count, acc, ops);
  }
  return acc;
}

float fma_chain(const float* a, std::ptrdiff_t a_stride, const float* b, std::ptrdiff_t b_stride,
                int len, float acc, MmaOperands) {
  for (int k = 0; k < len; ++k) acc = std::fmaf(a[k * a_stride], b[k * b_stride], acc);
  return acc;
}

}  // namespace ssmv::chunk_scan
