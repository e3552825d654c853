#include "spec/mamba3/contract.h"

namespace ssmv::mamba3 {

// The constants as the kernel has them: fp32(π) = 3.14159274..., and 1.44269504089 rounds to the
// same fp32 as log2 e (0x3FB8AA3B, the constant of tl.exp's lowering).
static_assert(kPiF32 == 3.14159274f && kTwoPiF32 == 2 * kPiF32);
static_assert(kLog2eF32 == float(1.4426950408889634) && kLog2eF32 == 0x1.715476p+0f);

TranscendentalBudget make_budget(const char* f, double c0, double c1, double abs, double lo, double hi,
                                 const char* how) {
  TranscendentalBudget b;
  b.function = f;
  b.ulp_const = c0;
  b.ulp_per_abs_arg = c1;
  b.abs_error = abs;
  b.arg_lo = lo;
  b.arg_hi = hi;
  b.how_measured = how;
  return b;
}

}  // namespace ssmv::mamba3
