// Portable fp32 transcendentals shared by the CUDA kernels and their host twins.
//
// Built only from IEEE fp32 + - * / (round to nearest even, no flush to zero), explicit
// fused multiply-adds (std::fma on the host, __fmaf_rn on the device) and integer bit
// manipulation: no libm call, no hardware approximation (no ex2.approx, no __expf), so
// the GPU and the CPU return identical bits for every argument. This holds only with
// contraction off (-ffp-contract=off, nvcc --fmad=false: set globally in CMakeLists.txt),
// IEEE division (nvcc's default -prec-div=true) and no --use_fast_math.
//
// The error figures in each function's first comment line were measured against MPFR
// (128-bit) by ssmv_fast_math_ulp (fast/common/tests/fast_math_ulp_main.cpp) over every
// bf16 value in the range plus 10^7 random fp32 arguments (seed 0x55; exp, log1p, softplus,
// sigmoid 2026-11-30, output in bench/NOTES.md, section SSU; silu, tanh, cos, sin for the
// Mamba-3 step 2026-12-05, output in docs/mamba3-bounds.md §15). Sampled maxima: an
// unsampled argument may err a little more, so contracts budget a margin above them
// (fast/ssu/contract.cpp, fast_math_budgets.h).
// One ULP is the spacing of fp32 values at the exact result (subnormal spacing 2^-149
// below 2^-126), as spec/format.h ulp_of(Format::fp32, ·) defines it.
#pragma once

#include <cstdint>

#include "fast/common/hd.h"

#ifndef __CUDA_ARCH__
#include <cmath>
#include <cstring>
#endif

namespace ssmv::fm {

// Bits of an fp32 value, and back.
SSMV_HD SSMV_FORCEINLINE uint32_t bits_of(float v) {
#ifdef __CUDA_ARCH__
  return static_cast<uint32_t>(__float_as_int(v));
#else
  uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
#endif
}

SSMV_HD SSMV_FORCEINLINE float float_of(uint32_t b) {
#ifdef __CUDA_ARCH__
  return __int_as_float(static_cast<int>(b));
#else
  float v;
  std::memcpy(&v, &b, sizeof v);
  return v;
#endif
}

// a·b + c rounded once (IEEE fusedMultiplyAdd, round to nearest even).
SSMV_HD SSMV_FORCEINLINE float fma_rn(float a, float b, float c) {
#ifdef __CUDA_ARCH__
  return __fmaf_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

// 2^n for -126 <= n <= 127 (a normal fp32 power of two, built from its exponent field).
SSMV_HD SSMV_FORCEINLINE float pow2i(int n) { return float_of(static_cast<uint32_t>(n + 127) << 23); }

// ≤ 0.9292 ULP over [-104, 88.72] (measured max; 0.9060 over [-87, 0]); +Inf above 88.7228.
// exp(x) = 2^n·e^r with n = round(x·log2 e), r = x − n·ln2 (Cody–Waite with fma: the first
// step x − n·ln2_hi is exact because it is a multiple of 2^-25 of magnitude < 0.5), and
// e^r by its degree-7 Taylor polynomial in Horner form (|r| ≤ 0.3466 + 2^-20: truncation
// r^8/8! ≤ 5.3e-9, 0.09 ULP). The scaling by 2^n is split into two exact powers of two so
// that a subnormal or overflowing result is rounded once, by the last multiplication.
SSMV_HD SSMV_FORCEINLINE float exp(float x) {
  if (x != x) return x + x;  // NaN in, quiet NaN out
  // Beyond these limits the result is +Inf or +0 after rounding (e^89 > 2^128,
  // e^-104 < 2^-150); clamping keeps n within the two-step scaling below.
  x = x > 89.0f ? 89.0f : x;
  x = x < -104.0f ? -104.0f : x;
  constexpr float kLog2e = 0x1.715476p+0f;
  constexpr float kLn2Hi = 0x1.62e430p-1f;   // fp32(ln 2)
  constexpr float kLn2Lo = -0x1.05c610p-29f;  // fp32(ln 2 − kLn2Hi)
  constexpr float kRoundMagic = 0x1.8p23f;    // adding it rounds to an integer in the low bits
  const float t = x * kLog2e + kRoundMagic;
  const int n = static_cast<int>(bits_of(t)) - static_cast<int>(bits_of(kRoundMagic));
  const float nf = t - kRoundMagic;  // exact
  float r = fma_rn(-nf, kLn2Hi, x);  // exact (see above)
  r = fma_rn(-nf, kLn2Lo, r);
  // Taylor coefficients 1/k!, rounded to fp32.
  float p = 0x1.a01a02p-13f;                // 1/7!
  p = fma_rn(p, r, 0x1.6c16c2p-10f);        // 1/6!
  p = fma_rn(p, r, 0x1.111112p-7f);         // 1/5!
  p = fma_rn(p, r, 0x1.555556p-5f);         // 1/4!
  p = fma_rn(p, r, 0x1.555556p-3f);         // 1/3!
  p = fma_rn(p, r, 0.5f);                   // 1/2!
  p = fma_rn(p, r, 1.0f);
  p = fma_rn(p, r, 1.0f);                   // p ≈ e^r in [0.707, 1.415]
  // n in [-150, 129]: n1 and n2 both in [-75, 65], so both powers are normal, p·2^n1 is
  // exact and the product with 2^n2 is the only rounding.
  const int n1 = n / 2;
  const int n2 = n - n1;
  return (p * pow2i(n1)) * pow2i(n2);
}

// ≤ 0.8101 ULP over [0, 2^29] (measured max; covers the e^x ≤ 4.9e8 softplus passes it).
// fdlibm's decomposition, written anew: u = fl(1 + x) = 2^k·m with m in [√2/2, √2),
// c = (1 + x − u)/u the correction for the rounding of u (computed exactly: x − (u − 1)
// when u ≤ 2, 1 − (u − x) above, both exact by Sterbenz), f = m − 1 (exact), and
// log(1 + f) = f − (f²/2 − s·(f²/2 + R)), s = f/(2 + f), R = 2·(s²/3 + s⁴/5 + … + s¹⁰/11)
// (|s| ≤ 0.1716: truncation s¹²·2/13 ≤ 1e-10 relative). Defined for x > -1: returns
// -Inf at -1, NaN below, +Inf at +Inf.
SSMV_HD SSMV_FORCEINLINE float log1p(float x) {
  if (x != x) return x + x;
  if (!(x > -1.0f)) return x == -1.0f ? -float_of(0x7f800000u) : float_of(0x7fc00000u);
  if (x == float_of(0x7f800000u)) return x;
  constexpr float kLn2Hi = 0x1.62e4p-1f;      // 16 significant bits: k·kLn2Hi exact for |k| < 256
  constexpr float kLn2Lo = 0x1.7f7d1cp-20f;   // fp32(ln 2 − kLn2Hi)
  constexpr float kSqrt2 = 0x1.6a09e6p+0f;
  const float u = 1.0f + x;
  const float c = (u <= 2.0f ? x - (u - 1.0f) : 1.0f - (u - x)) / u;
  const uint32_t ub = bits_of(u);
  int k = static_cast<int>(ub >> 23) - 127;  // u ≥ 2^-24 here, hence normal
  float m = float_of((ub & 0x007fffffu) | 0x3f800000u);  // in [1, 2)
  if (m > kSqrt2) {
    m = m * 0.5f;  // exact
    k = k + 1;
  }
  const float f = m - 1.0f;  // exact (Sterbenz)
  const float s = f / (2.0f + f);
  const float hfsq = 0.5f * f * f;
  const float z = s * s;
  // 2/(2j+1), rounded to fp32.
  float R = 0x1.745d18p-3f;          // 2/11
  R = fma_rn(R, z, 0x1.c71c72p-3f);  // 2/9
  R = fma_rn(R, z, 0x1.24924ap-2f);  // 2/7
  R = fma_rn(R, z, 0x1.99999ap-2f);  // 2/5
  R = fma_rn(R, z, 0x1.555556p-1f);  // 2/3
  R = R * z;
  const float kf = static_cast<float>(k);
  return kf * kLn2Hi - ((hfsq - (s * (hfsq + R) + (kf * kLn2Lo + c))) - f);
}

// ≤ 1.5247 ULP over [-104, 20] (measured max), and exactly x above 20 (the shortcut: error
// log1p(e^-x) < e^-20 = 2.1e-9 absolute, measured ≤ 0.0011 ULP of the result).
// softplus(x) = log(1 + e^x), computed as log1p(exp(x)).
SSMV_HD SSMV_FORCEINLINE float softplus(float x) {
  if (x > 20.0f) return x;
  return log1p(exp(x));
}

// ≤ 2.4098 ULP over [-87, 110] (measured max), absolute error < 2^-128 below -87
// (measured 0x1.ff6p-129; e^-x overflows for x < -88.72: the result is +0, exact < 3.0e-39).
// sigmoid(x) = 1 / (1 + e^-x).
SSMV_HD SSMV_FORCEINLINE float sigmoid(float x) { return 1.0f / (1.0f + exp(-x)); }

// ≤ 2.7173 ULP over [-87, 110] (measured max), absolute error < 2.61e-37 below -87 (measured
// 2.604e-37: the sigmoid's tail error < 2^-128 times |x| ≤ 88.73, then 0 for the exact
// |x|e^x ≤ 2.6075e-37 below -88.7228), 0 ULP above 110 (σ = 1: x itself).
// silu(x) = x·σ(x): the z gate of the Mamba-3 step (fast/mamba3/).
SSMV_HD SSMV_FORCEINLINE float silu(float x) { return x * sigmoid(x); }

// ≤ 1.5463 ULP over every finite fp32 argument (measured max, at -0.5512: the exp branch).
// Odd: evaluated on |x| and the sign put back. |x| < 2^-12: x itself (tanh x = x − x³/3 + …,
// relative error < 2^-25.5). |x| < 0.55: x + x·z·P(z), z = x², x + x³·P(x²) the Taylor series
// of tanh through x^19 (coefficients c_{2k−1} = 2^{2k}(2^{2k} − 1)B_{2k}/(2k)!, rounded to
// fp32; the series' ratio at 0.55 is (2·0.55/π)² = 0.12: truncation c_21·x^20 ≤ 6.2e-10
// relative). Above: 1 − 2/(e^{2|x|} + 1) with exp above (1 − q ≥ 0.5 there, so q's relative
// error is not magnified; e^{2|x|} overflows to +Inf beyond 44.4 and the result is 1, as it is
// after rounding from 9.02 on).
SSMV_HD SSMV_FORCEINLINE float tanh(float x) {
  const uint32_t sign = bits_of(x) & 0x80000000u;
  const float a = float_of(bits_of(x) & 0x7fffffffu);
  if (!(a >= 0x1p-12f)) return x;  // tiny, ±0, subnormal (and NaN: x != x)
  float t;
  if (a < 0.55f) {
    const float z = a * a;
    float p = -0x1.f57d78p-13f;         // c_19
    p = fma_rn(p, z, 0x1.355824p-11f);  // c_17
    p = fma_rn(p, z, -0x1.7da364p-10f); // c_15
    p = fma_rn(p, z, 0x1.d6d3d0p-9f);   // c_13
    p = fma_rn(p, z, -0x1.226e36p-7f);  // c_11
    p = fma_rn(p, z, 0x1.664f48p-6f);   // c_9  = 62/2835
    p = fma_rn(p, z, -0x1.ba1ba2p-5f);  // c_7  = -17/315
    p = fma_rn(p, z, 0x1.111112p-3f);   // c_5  = 2/15
    p = fma_rn(p, z, -0x1.555556p-2f);  // c_3  = -1/3
    t = fma_rn(a * z, p, a);
  } else {
    const float e = exp(2.0f * a);  // 2a exact
    t = 1.0f - 2.0f / (e + 1.0f);
  }
  return float_of(bits_of(t) | sign);
}

// The Cody–Waite reduction of cos and sin: x = j·π/2 + r, j = rint(x·2/π) (an integer as an
// fp32), r = ((x − j·P1) − j·P2) − j·P3 with P1 + P2 + P3 = π/2 to 2^-76 (P1 = fp32(π/2); the
// first step is exact for |x| ≤ 2^21: x − j·P1 lies on the grid 2^-23 (or x's finer one when
// |x| < 1) and |x − j·P1| < 1), |r| ≤ 0.91 (≤ π/4 + 2^-22 for |x| ≤ 8).
struct QuarterTurns {
  float r;
  int j;  // the quadrant, j mod 4
};
SSMV_HD SSMV_FORCEINLINE QuarterTurns quarter_turns(float x) {
  constexpr float kTwoOverPi = 0x1.45f306p-1f;
  constexpr float kRoundMagic = 0x1.8p23f;
  constexpr float kP1 = 0x1.921fb6p+0f;
  constexpr float kP2 = -0x1.777a5cp-25f;
  constexpr float kP3 = -0x1.ee59dap-50f;
  const float t = x * kTwoOverPi + kRoundMagic;
  const int j = static_cast<int>(bits_of(t)) - static_cast<int>(bits_of(kRoundMagic));
  const float jf = t - kRoundMagic;  // exact
  float r = fma_rn(-jf, kP1, x);     // exact (see above)
  r = fma_rn(-jf, kP2, r);
  r = fma_rn(-jf, kP3, r);
  return {r, j};
}

// sin r for |r| ≤ 0.91: r + r·z·S(z), z = r², S the Taylor series of (sin r − r)/r³ through
// r^10 (truncation r^12/13! ≤ 5e-11 relative).
SSMV_HD SSMV_FORCEINLINE float sin_poly(float r) {
  const float z = r * r;
  float p = -0x1.ae6456p-26f;         // -1/11!
  p = fma_rn(p, z, 0x1.71de3ap-19f);  //  1/9!
  p = fma_rn(p, z, -0x1.a01a02p-13f); // -1/7!
  p = fma_rn(p, z, 0x1.111112p-7f);   //  1/5!
  p = fma_rn(p, z, -0x1.555556p-3f);  // -1/3!
  return fma_rn(r * z, p, r);
}

// cos r for |r| ≤ 0.91: 1 − z/2 + z²·Q(z), Q the Taylor series of (cos r − 1 + r²/2)/r⁴ through
// r^10 (truncation r^12/12! ≤ 7e-10). z = r² is split into z + zl exactly (fma), and
// w = fl(1 − z/2) is corrected by its own rounding error (1 − w) − z/2 (both steps exact, w in
// [0.58, 1]), as fdlibm's __kernel_cos does.
SSMV_HD SSMV_FORCEINLINE float cos_poly(float r) {
  const float z = r * r;
  const float zl = fma_rn(r, r, -z);  // r² − z, exact
  float q = 0x1.1eed8ep-29f;          //  1/12!
  q = fma_rn(q, z, -0x1.27e4fcp-22f); // -1/10!
  q = fma_rn(q, z, 0x1.a01a02p-16f);  //  1/8!
  q = fma_rn(q, z, -0x1.6c16c2p-10f); // -1/6!
  q = fma_rn(q, z, 0x1.555556p-5f);   //  1/4!
  const float hz = 0.5f * z;          // exact
  const float w = 1.0f - hz;
  const float corr = ((1.0f - w) - hz) - 0.5f * zl;
  return w + fma_rn(z * z, q, corr);
}

// ≤ 1.4237 ULP over [-8, 8] (measured max; the Mamba-3 step feeds its reduced angle, in
// [0, fp32(2π)] and a few ULP either side); over [-2^21, 2^21] 1.8067 ULP, 0x1.011p-24 absolute.
// NaN for |x| > 2^21, Inf and NaN (the reduction's first step is exact only up to there).
SSMV_HD SSMV_FORCEINLINE float cos(float x) {
  if (!(float_of(bits_of(x) & 0x7fffffffu) <= 0x1p21f)) return float_of(0x7fc00000u);
  const QuarterTurns q = quarter_turns(x);
  switch (q.j & 3) {
    case 0: return cos_poly(q.r);
    case 1: return -sin_poly(q.r);
    case 2: return -cos_poly(q.r);
    default: return sin_poly(q.r);
  }
}

// ≤ 1.4195 ULP over [-8, 8] (measured max); over [-2^21, 2^21] 1.7862 ULP, 0x1.0e99p-24 absolute; NaN for
// |x| > 2^21, Inf and NaN, as cos; x itself below 2^-12.
SSMV_HD SSMV_FORCEINLINE float sin(float x) {
  const float a = float_of(bits_of(x) & 0x7fffffffu);
  if (a < 0x1p-12f) return x;  // sin x = x − x³/6 + …: relative error < 2^-26.5 (keeps ±0)
  if (!(a <= 0x1p21f)) return float_of(0x7fc00000u);
  const QuarterTurns q = quarter_turns(x);
  switch (q.j & 3) {
    case 0: return sin_poly(q.r);
    case 1: return cos_poly(q.r);
    case 2: return -sin_poly(q.r);
    default: return -cos_poly(q.r);
  }
}

}  // namespace ssmv::fm
