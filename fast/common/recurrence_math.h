// The per-token facts of docs/design.md §2 that both bundled kernels compute the same way,
// written once and compiled by nvcc into the kernels and by the C++ compiler into the host
// twins (SSMV_HD; fast/ssu/arithmetic.h and fast/chunk_scan/arithmetic.h call these). The
// reference computes the same expressions exactly in MPFR (reference/), the bounds budget
// their roundings (verify/bound/).
#pragma once

#include "fast/common/fast_math.h"
#include "fast/common/hd.h"

namespace ssmv::fm {

// δ = clamp(softplus?(dt + dt_bias), lo, hi), rounding points:
//   v = fl(dt + dt_bias): one fp32 rounding; no bias: v = dt itself (adding +0 would turn
//       −0 into +0);
//   softplus(v) ≤ 1.6 ULP (fast_math_budgets.h), exactly v above 20;
//   the clamp is exact.
SSMV_HD SSMV_FORCEINLINE float delta(float dt, bool has_bias, float bias, bool softplus, float lo, float hi) {
  float v = has_bias ? dt + bias : dt;
  if (softplus) v = fm::softplus(v);
  v = v < lo ? lo : v;
  v = v > hi ? hi : v;
  return v;
}

// The output epilogue, rounding points:
//   y = fma_rn(D, x, acc) with D (one rounding; y = acc without D);
//   y = fl(y · fl(z · σ(z))) with z (σ ≤ 2.5 ULP, fast_math_budgets.h; two products).
SSMV_HD SSMV_FORCEINLINE float output_epilogue(float acc, bool has_D, float D, float x, bool has_z, float z) {
  float y = has_D ? fma_rn(D, x, acc) : acc;
  if (has_z) y = y * (z * sigmoid(z));
  return y;
}

}  // namespace ssmv::fm
