// Per-element fp32 arithmetic of the chunk_scan stages, shared verbatim by the CUDA
// kernels and the host twin (SSMV_HD): one source, so both perform the same IEEE fp32
// operations in the same order (contraction is off in both compilers). Stage (a)'s δ and
// stage (e)'s epilogue are the facts both kernels share: fm::delta and fm::output_epilogue
// (fast/common/recurrence_math.h).
#pragma once

#include "fast/common/fast_math.h"
#include "fast/common/hd.h"
#include "fast/common/recurrence_math.h"

namespace ssmv::chunk_scan {

// fm::exp(x) bit for bit where x ≤ 0 or x = −Inf (not NaN), with fewer operations: fm::exp's
// NaN test and upper clamp cannot act there, and 2^n (n in [−150, 0]) is applied as
// 2^(n+64)·2^-64 instead of fm::exp's 2^trunc(n/2)·…: the first factor by adding n + 64 to
// p's exponent field (p in [0.70, 1.42], so p·2^(n+64) lies in [2^-87, 2^65], normal: the
// exact product), n + 64 itself read off t's bits with the bias folded into the magic's
// (one integer subtraction); then one multiplication by 2^-64, exact where p·2^n is normal
// and one correct rounding where it is subnormal: p·2^n rounded once, as in fm::exp.
// Checked against fm::exp over every fp32 x ≤ 0 (stage_math_test).
SSMV_HD SSMV_FORCEINLINE float exp_nonpositive(float x) {
  x = x < -104.0f ? -104.0f : x;
  constexpr float kLog2e = 0x1.715476p+0f;   // fm::exp's constants
  constexpr float kLn2Hi = 0x1.62e430p-1f;
  constexpr float kLn2Lo = -0x1.05c610p-29f;
  constexpr float kRoundMagic = 0x1.8p23f;
  const float t = x * kLog2e + kRoundMagic;
  // n + 64 with n = round(x·log2 e) in [−150, 0]: t's bits minus the magic's, less 64.
  const uint32_t n64 = ssmv::fm::bits_of(t) - (ssmv::fm::bits_of(kRoundMagic) - 64u);
  const float nf = t - kRoundMagic;
  float r = ssmv::fm::fma_rn(-nf, kLn2Hi, x);
  r = ssmv::fm::fma_rn(-nf, kLn2Lo, r);
  float p = 0x1.a01a02p-13f;
  p = ssmv::fm::fma_rn(p, r, 0x1.6c16c2p-10f);
  p = ssmv::fm::fma_rn(p, r, 0x1.111112p-7f);
  p = ssmv::fm::fma_rn(p, r, 0x1.555556p-5f);
  p = ssmv::fm::fma_rn(p, r, 0x1.555556p-3f);
  p = ssmv::fm::fma_rn(p, r, 0.5f);
  p = ssmv::fm::fma_rn(p, r, 1.0f);
  p = ssmv::fm::fma_rn(p, r, 1.0f);
  const float p_scaled = ssmv::fm::float_of(ssmv::fm::bits_of(p) + (n64 << 23));  // p·2^(n+64), exact
  return p_scaled * 0x1p-64f;
}

// exp(min(d, 0)) for d = cs_m − cs_k (≤ 1.0 ULP, fast_math_budgets.h): the production kernels' guard against
// growth when δ·A > 0. A NaN d gives exp(0) = 1, as fm::exp(d < 0 ? d : 0) does.
SSMV_HD SSMV_FORCEINLINE float segment_decay(float d) { return exp_nonpositive(d < 0.0f ? d : 0.0f); }

// Stage (b) scale of token k: exp(min(cs_last − cs_k, 0))·δ_k (then B·scale).
SSMV_HD SSMV_FORCEINLINE float state_scale(float cs_last, float cs_k, float delta_k) {
  return segment_decay(cs_last - cs_k) * delta_k;
}

// Stage (e) weight before the rounding: (CB·exp(min(cs_m − cs_k, 0)))·δ_k.
SSMV_HD SSMV_FORCEINLINE float cb_weight(float cb, float cs_m, float cs_k, float delta_k) {
  return (cb * segment_decay(cs_m - cs_k)) * delta_k;
}

}  // namespace ssmv::chunk_scan
