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

}  // namespace ssmv::fm
