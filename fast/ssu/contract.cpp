#include "fast/ssu/contract.h"

#include <limits>

namespace ssmv::ssu {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// fast/common/fast_math.h, measured against MPFR by ssmv_fast_math_ulp (every bf16
// argument plus 10^7 random fp32 arguments per range, 2026-11-30). The budgets sit above
// the sampled maxima (exp 0.9292, softplus 1.5247, sigmoid 2.4098 ULP) by a margin for
// arguments the sample missed; the sampled maxima grew by at most 0.43 ULP from 10^5 to
// 10^7 arguments (sigmoid 1.9783 -> 2.4098), so the margins are ~0.1 ULP.
const char* kHowMeasured =
    "ssmv_fast_math_ulp 10000000 0x55 (fast/common/tests), 2026-11-30: max over all bf16 arguments "
    "plus 10^7 random fp32 arguments per range against MPFR at 128 bits; budget = sampled max + margin";

}  // namespace

Contract contract() {
  Contract c;
  c.name = "ssu";
  c.kernel = "ssu";
  c.family = Family::sequential;
  c.accumulation = Format::fp32;
  // The state stays fp32 across the tokens of one launch; y is computed from the
  // unrounded fp32 state, which is rounded only when stored (final and per-token states).
  c.roundings = {
      {Point::stored_state, FormatRef::state},
      {Point::output, FormatRef::output},
  };
  // exp: a = exp(fl(δ·A)); sampled max 0.9292 ULP over [-104, 88.72]; below -104 the
  // result is +0 and the exact value < 2^-150 (within half a subnormal ULP).
  c.transcendentals.push_back({"exp", 1.0, 0.0, 0.0, -kInf, 88.72, kHowMeasured});
  // softplus = log1p(exp(v)) for v <= 20, v above (the shortcut: error < e^-20, 0.0011
  // ULP): sampled max 1.5247 ULP over [-104, 20]; below -104 exact < 2^-150, result +0.
  c.transcendentals.push_back({"softplus", 1.6, 0.0, 0.0, -kInf, kInf, kHowMeasured});
  // sigmoid = 1/(1 + exp(-v)): sampled max 2.4098 ULP over [-87, 110]; below -87 the
  // absolute error is < 2^-128 (exp(-v) overflows below -88.72, giving +0 for an exact
  // value < 3.0e-39); above 110 the result is 1 and the exact value 1 - e^-110.
  c.transcendentals.push_back({"sigmoid", 2.5, 0.0, 0x1p-128, -kInf, kInf, kHowMeasured});
  c.reductions.push_back(
      {"y = Σ_n C·S", ReductionOrder::sequential_fma, 16,
       "lane l of a warp accumulates acc = fma(C[n], S[n], acc) from acc = +0 over its n = (j·32 + l)·V + v "
       "(j < J, v < V, n < N; V = widest of 8/4/2/1 with V·bytes(state) <= 16 and 32·V <= N; J = ceil(N/(32·V)) "
       "<= 2), in order j then v; then a 5-level xor butterfly of fp32 adds (offsets 16, 8, 4, 2, 1); then "
       "y = fma(D, x, sum) (one rounding for the D term), y = y·(z·sigmoid(z)). The longest lane chain is at most "
       "ceil(N/16) - 1 longer than ceil(N/32), so partials = 16 bounds the depth (lane chain + tree) for every "
       "N <= 256 (tests/contract_test.cpp)"});
  c.flush_to_zero = false;
  c.softplus_shortcut = true;
  // Bit-identical: same per-thread code, explicit fma, portable transcendentals, and
  // measured so (gpu_twin_how_measured).
  c.gpu_twin_max_ulps = 0;
  c.gpu_twin_how_measured =
      "H200, 2026-11-30 (bench/NOTES.md, SSU): ssu_gpu_test, 1200 random problems (every format, P and N from 1 "
      "to 256, pads, repeated read slots, per-token states; 600237 y elements and every pool slot) plus the "
      "benchmark shapes and the unaligned-pool path: GPU = twin bit for bit, repeated runs identical; every "
      "geometry variant of ssu_bench (4/8/16 rows per warp, register caps) equal to the twin on a batch-8 "
      "problem of the benchmark shape";
  return c;
}

}  // namespace ssmv::ssu
