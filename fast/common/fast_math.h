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
// bf16 value in the range plus 10^7 random fp32 arguments (2026-11-30, seed 0x55; output
// in bench/NOTES.md, section SSU). Sampled maxima: an unsampled argument may err a little
// more, so contracts budget a margin above them (fast/ssu/contract.cpp).
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

}  // namespace ssmv::fm
