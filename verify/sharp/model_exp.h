// exp in double for the sharp verdict's emulation (emulation.cpp's Model): within 1 ulp of the
// exact value (measured against MPFR in verify/tests/model_exp_test.cpp), the same bits on every
// machine and in every vector clone, and branch-free, so that a loop over an array of arguments
// vectorises (the chunked runs take exp of every C·Bᵀ weight's decay, L(L + 1)/2 per chunk and
// run: libm's exp one by one had been a twentieth of a chunk_scan check).
//
// Why its own: the emulation models an fp32 kernel whose exp is budgeted in fp32 ulps (2^29 of
// double's), so 1 ulp of double is far below anything it models; what matters is that the
// emulation's bits do not depend on the machine's libm or CPU, and its speed.
//
// Method (fdlibm's reduction, a Taylor polynomial): k = nearest integer to x·log2(e), formed by
// the 1.5·2^52 shifter; r = (x − k·ln2_hi) − k·ln2_lo, where ln2_hi has 32 significant bits so
// that k·ln2_hi is exact for |k| < 2^21 and the first subtraction is exact (Sterbenz), |r| ≤
// 0.3466; p = 1 + (r + r²·q) with q = Σ_{j=2..13} r^(j−2)/j! by Horner (truncation: r^14/14! < 2^-64 of p); the result
// p·2^k1·2^(k−k1) with k1 = min(max(k, −960), 1023), two products by normal powers of two: the
// first is exact (p·2^k1 stays normal), the second rounds once, and only into the subnormal
// range (results below 2^-1022). No std::fma, nothing contracted
// (-ffp-contract=off): the same operations in every clone. x > 709.78 gives +∞, x < −745.14 gives
// +0, NaN gives NaN.
#pragma once

#include <bit>
#include <cstdint>
#include <limits>

namespace ssmv::sharp {

inline double model_exp(double x) {
  constexpr double kLog2e = 0x1.71547652b82fep0;
  constexpr double kShifter = 0x1.8p52;  // t = v + 1.5·2^52 holds round(v) in its low bits (|v| < 2^51)
  constexpr double kLn2Hi = 0x1.62e42feep-1, kLn2Lo = 0x1.a39ef35793c76p-33;
  // Arguments outside [−746, 710] are clamped for the arithmetic and their result chosen below.
  const double xc = x < -746.0 ? -746.0 : (x > 710.0 ? 710.0 : x);
  const double t = xc * kLog2e + kShifter;
  const double kd = t - kShifter;  // k, exact
  const int64_t k = int64_t(std::bit_cast<uint64_t>(t) - std::bit_cast<uint64_t>(kShifter));
  const double r = (xc - kd * kLn2Hi) - kd * kLn2Lo;
  // exp(r) = 1 + (r + r²·q), q = Σ_{j=2..13} r^(j−2)/j! by Horner, 1/j! the compiler's correctly
  // rounded quotients (j! is exact in double for j ≤ 18); the last add rounds once onto 1.
  double q = 1.0 / 6227020800.0;  // 1/13!
  q = q * r + 1.0 / 479001600.0;
  q = q * r + 1.0 / 39916800.0;
  q = q * r + 1.0 / 3628800.0;
  q = q * r + 1.0 / 362880.0;
  q = q * r + 1.0 / 40320.0;
  q = q * r + 1.0 / 5040.0;
  q = q * r + 1.0 / 720.0;
  q = q * r + 1.0 / 120.0;
  q = q * r + 1.0 / 24.0;
  q = q * r + 1.0 / 6.0;
  q = q * r + 0.5;
  const double p = 1.0 + (r + (r * r) * q);
  const int64_t k1 = k < -960 ? -960 : (k > 1023 ? 1023 : k);
  const double s1 = std::bit_cast<double>(uint64_t(k1 + 1023) << 52);
  const double s2 = std::bit_cast<double>(uint64_t(k - k1 + 1023) << 52);  // 2^(k − k1) ∈ [2^-116, 2]
  const double y = (p * s1) * s2;
  return x > 0x1.62e42fefa39efp9 ? std::numeric_limits<double>::infinity()
                                 : (x < -0x1.74910d52d3051p9 ? 0.0 : (x != x ? x : y));
}

}  // namespace ssmv::sharp
