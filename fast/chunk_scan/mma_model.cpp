#include "fast/chunk_scan/mma_model.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

#include "fast/common/fast_math.h"

namespace ssmv::chunk_scan {
namespace {

// Measured on the H200 (2026-11-30, 7.2 M outputs, bench/NOTES.md): the truncation grid
// 2^(E−26) never falls below 2^-158, as if E were clamped to −132 from below. Only sums of
// products under 2^-132 notice: their results lie in or near fp32's subnormal range.
constexpr int kMinAlignExponent = -132;

// Rounds m·2^q (m an integer, |m| < 2^40) toward zero to fp32, including the subnormal
// range (multiples of 2^-149) and overflow (toward zero gives ±FLT_MAX). q = E − 26 lies in
// [−158, 230]: 2^q is a normal double.
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
  // (2^q built from its exponent field) and in float.
  const double v = double(mag) * std::bit_cast<double>(uint64_t(q + 1023) << 52);
  return float(negative ? -v : v);
}

// floor(log2|v|) of a finite non-zero fp32 value from its bits (a subnormal's leading bit
// is at 2^(31 − clz(fraction) − 149)); 0 for ±0, which no caller reads.
int ilogb_bits(uint32_t b) {
  const int field = int((b >> 23) & 0xffu);
  const uint32_t fraction = b & 0x7fffffu;
  return field != 0 ? field - 127 : fraction != 0 ? 31 - __builtin_clz(fraction) - 149 : 0;
}

bool zero_bits(uint32_t b) { return (b & 0x7fffffffu) == 0; }
bool finite_bits(uint32_t b) { return ((b >> 23) & 0xffu) != 0xffu; }

// Not covered by docs/design.md §4 (Inf or NaN among the operands or c, not measured): the
// IEEE double sum of c and the products, rounded to fp32 — ±Inf or NaN as IEEE arithmetic
// gives them.
float ieee_step(const float* a, const float* b, int count, float c) {
  double sum = c;
  for (int k = 0; k < count; ++k) sum += double(a[k]) * double(b[k]);
  return float(sum);
}

// mma_step for one subnormal rule, written without branches over the k-step so that the
// compiler vectorises it: a term that takes no part (a zero product; under the flush rule,
// one with a subnormal operand) gets the value 0 and a reference exponent below every other.
//
// A product of two fp32 values (24-bit significands) is exact in double, and so is its
// scaling by 2^(26−E): |term| ≥ 2^-298 and 26 − E ∈ [−229, 158] keep it a normal double.
// The scaled term is below 2^27 in magnitude (|term| < 2^(ref+1) ≤ 2^(E+1)), so its
// conversion to int32 is its truncation toward zero; 17 of them sum below 2^32 in int64.
template <SubnormalRule rule>
float step(const float* a, const float* b, int count, float c, int emin) {
  constexpr int kAbsent = -100000;  // the reference exponent of a term that takes no part
  double term[16];
  int E = kMinAlignExponent;  // no term keeps bits below 2^-158
  int present = 0, nonfinite = 0;
  for (int k = 0; k < count; ++k) {
    const uint32_t ab = fm::bits_of(a[k]), bb = fm::bits_of(b[k]);
    const int fa = int((ab >> 23) & 0xffu), fb = int((bb >> 23) & 0xffu);
    nonfinite |= (fa == 0xff) | (fb == 0xff);
    int absent = ((ab << 1) == 0) | ((bb << 1) == 0);
    int ea, eb;
    if constexpr (rule == SubnormalRule::exponent_field) {
      // A subnormal operand reads its exponent field, max(floor(log2|v|), emin): the fp32
      // field of a subnormal fp32 value gives −127 < emin.
      ea = std::max(fa - 127, emin);
      eb = std::max(fb - 127, emin);
    } else {
      ea = ilogb_bits(ab);
      eb = ilogb_bits(bb);
      if constexpr (rule == SubnormalRule::flush) absent |= (ea < emin) | (eb < emin);
    }
    E = std::max(E, absent ? kAbsent : ea + eb + 1);
    present += 1 - absent;
    const double product = double(a[k]) * double(b[k]);  // computed unconditionally: no branch
    term[k] = absent ? 0.0 : product;
  }
  const uint32_t cb = fm::bits_of(c);
  if (nonfinite || !finite_bits(cb)) return ieee_step(a, b, count, c);
  // All products zero: c passes unchanged, except that a zero comes out as +0 (see the header).
  if (present == 0) return zero_bits(cb) ? 0.0f : c;
  // A subnormal c also reads its exponent field: e(c) = max(floor(log2|c|), −126).
  if (!zero_bits(cb)) E = std::max(E, std::max(ilogb_bits(cb), -126) + 1);
  const double scale = std::bit_cast<double>(uint64_t(26 - E + 1023) << 52);  // 2^(26−E)
  int64_t sum = int32_t(double(c) * scale);
  for (int k = 0; k < count; ++k) sum += int32_t(term[k] * scale);
  return round_toward_zero(sum, E - 26);
}

}  // namespace

float mma_step(const float* a, const float* b, int count, float c, MmaOperands ops) {
  const int emin = format_info(ops.format).emin;
  switch (ops.rule) {
    case SubnormalRule::true_exponent: return step<SubnormalRule::true_exponent>(a, b, count, c, emin);
    case SubnormalRule::flush: return step<SubnormalRule::flush>(a, b, count, c, emin);
    case SubnormalRule::exponent_field: break;
  }
  return step<SubnormalRule::exponent_field>(a, b, count, c, emin);
}

float mma_chain(const float* a, std::ptrdiff_t a_stride, const float* b, std::ptrdiff_t b_stride,
                int len, float acc, MmaOperands ops) {
  float av[16], bv[16];
  for (int k0 = 0; k0 < len; k0 += 16) {
    const int count = len - k0 < 16 ? len - k0 : 16;
    // Strided operands are gathered first: the step reads contiguous ones.
    const float* ak = a + k0 * a_stride;
    const float* bk = b + k0 * b_stride;
    if (a_stride != 1) {
      for (int k = 0; k < count; ++k) av[k] = ak[k * a_stride];
      ak = av;
    }
    if (b_stride != 1) {
      for (int k = 0; k < count; ++k) bv[k] = bk[k * b_stride];
      bk = bv;
    }
    acc = mma_step(ak, bk, count, acc, ops);
  }
  return acc;
}

float fma_chain(const float* a, std::ptrdiff_t a_stride, const float* b, std::ptrdiff_t b_stride,
                int len, float acc, MmaOperands) {
  for (int k = 0; k < len; ++k) acc = std::fmaf(a[k * a_stride], b[k * b_stride], acc);
  return acc;
}

}  // namespace ssmv::chunk_scan
