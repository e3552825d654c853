// Per-element fp32 arithmetic of the chunk_scan stages, shared verbatim by the CUDA
// kernels and the host twin (SSMV_HD): one source, so both perform the same IEEE fp32
// operations in the same order (contraction is off in both compilers).
#pragma once

#include "fast/common/fast_math.h"
#include "fast/common/hd.h"

namespace ssmv::chunk_scan {

// Stage (a): δ = clamp(softplus?(dt + dt_bias), lo, hi). No bias: δ starts as dt itself
// (adding +0 would turn −0 into +0). softplus ≤ 1.6 ULP (fast_math_budgets.h), exactly x above 20.
SSMV_HD SSMV_FORCEINLINE float delta_of(float dt, float bias, bool has_bias, bool softplus,
                                        float lo, float hi) {
  float v = has_bias ? dt + bias : dt;
  if (softplus) v = ssmv::fm::softplus(v);
  v = v < lo ? lo : v;
  v = v > hi ? hi : v;
  return v;
}

// exp(min(d, 0)) for d = cs_m − cs_k (≤ 1.0 ULP, fast_math_budgets.h): the production kernels' guard against
// growth when δ·A > 0.
SSMV_HD SSMV_FORCEINLINE float segment_decay(float d) { return ssmv::fm::exp(d < 0.0f ? d : 0.0f); }

// Stage (b) scale of token k: exp(min(cs_last − cs_k, 0))·δ_k (then B·scale).
SSMV_HD SSMV_FORCEINLINE float state_scale(float cs_last, float cs_k, float delta_k) {
  return segment_decay(cs_last - cs_k) * delta_k;
}

// Stage (e) weight before the rounding: (CB·exp(min(cs_m − cs_k, 0)))·δ_k.
SSMV_HD SSMV_FORCEINLINE float cb_weight(float cb, float cs_m, float cs_k, float delta_k) {
  return (cb * segment_decay(cs_m - cs_k)) * delta_k;
}

// Stage (e) epilogue: y = fma(D, x, acc) when D is given, then y·(z·σ(z)) when z is given.
SSMV_HD SSMV_FORCEINLINE float epilogue(float acc, float x, float d, bool has_d, float z,
                                        bool has_z) {
  if (has_d) acc = ssmv::fm::fma_rn(d, x, acc);
  if (has_z) acc = acc * (z * ssmv::fm::sigmoid(z));
  return acc;
}

}  // namespace ssmv::chunk_scan
