// The error budgets of fast/common/fast_math.h as contract data (spec/contract.h), in one
// place for every kernel that uses these functions (SSU, chunk_scan).
//
// Measured against MPFR by ssmv_fast_math_ulp (fast/common/tests; every bf16 argument plus
// 10^7 random fp32 arguments per range, 2026-11-30; bench/NOTES.md): exp 0.9292,
// softplus 1.5247, sigmoid 2.4098 ULP. The budgets sit above the sampled maxima by a margin
// for arguments the sample missed (the maxima grew by at most 0.43 ULP from 10^5 to 10^7
// arguments), and cover every argument the kernels can pass:
//   exp      (-inf, 88.72]: below -104 the result is +0 and the exact value < 2^-150;
//   softplus (-inf, +inf): above 20 the shortcut returns x, error log1p(e^-x) < e^-20
//            (0.0011 ULP of x); below -104 the result is +0 and the exact value < 2^-150;
//   sigmoid  (-inf, +inf): below -87 the absolute error is < 2^-128; above 110 the result
//            is 1 and the exact value 1 − e^-110.
#pragma once

#include <limits>
#include <vector>

#include "spec/contract.h"

namespace ssmv::fm {

inline std::vector<TranscendentalBudget> fast_math_budgets() {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const char* how =
      "ssmv_fast_math_ulp 10000000 0x55 (fast/common/tests), 2026-11-30: max over all bf16 arguments "
      "plus 10^7 random fp32 arguments per range against MPFR at 128 bits; budget = sampled max + margin";
  return {
      {"exp", 1.0, 0.0, 0.0, -kInf, 88.72, how},
      {"softplus", 1.6, 0.0, 0.0, -kInf, kInf, how},
      {"sigmoid", 2.5, 0.0, 0x1p-128, -kInf, kInf, how},
  };
}

// The budgets of silu, tanh, cos and sin (the Mamba-3 step's, fast/mamba3/contract.cpp), apart
// from fast_math_budgets() so that the Mamba2 contracts keep their three. Measured like those
// (ssmv_fast_math_ulp 10000000 0x55 <function>, 2026-12-05; docs/mamba3-bounds.md §15): silu
// 2.7173 ULP over [-87, 110], tanh 1.5463 over every finite argument, cos 1.4237 and sin 1.4195
// over [-8, 8]. Budget = sampled max + the growth of that maximum from 10^5 to 10^7 arguments
// (silu 2.1868 -> 2.7173, tanh 1.4056 -> 1.5463, cos 1.3950 -> 1.4237, sin 1.3587 -> 1.4195),
// rounded up to 0.1 ULP. Ranges:
//   silu (-inf, +inf): above 110 the result is x (0 ULP measured); below -87 the absolute error
//        is < 2.61e-37 (derived in fast_math.h; measured 2.604e-37);
//   tanh (-inf, +inf): measured over every finite fp32 argument (random bit patterns);
//   cos, sin [-8, 8]: the reduced angle the step feeds ([0, fp32(2π)] and a few ULP).
inline std::vector<TranscendentalBudget> fast_math_rotary_budgets() {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const char* how =
      "ssmv_fast_math_ulp 10000000 0x55 <function> (fast/common/tests), 2026-12-05: max over all bf16 arguments "
      "plus 10^7 random fp32 arguments per range against MPFR at 128 bits; budget = sampled max + its growth from "
      "10^5 to 10^7 arguments, rounded up to 0.1 ULP";
  return {
      {"silu", 3.3, 0.0, 2.61e-37, -kInf, kInf, how},
      {"tanh", 1.7, 0.0, 0.0, -kInf, kInf, how},
      {"cos", 1.5, 0.0, 0.0, -8.0, 8.0, how},
      {"sin", 1.5, 0.0, 0.0, -8.0, 8.0, how},
  };
}

}  // namespace ssmv::fm
