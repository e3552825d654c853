// ssmv_fast_math_ulp [random_count] [seed] [function]: measures the maximum error in fp32 ULPs
// of fast/common/fast_math.h against MPFR over the ranges the kernels use, every bf16
// argument in the range plus random_count (default 10^7) random fp32 arguments; only the
// ranges of `function` (exp, log1p, softplus, sigmoid, silu, tanh, cos, sin) when given.
// Its output backs the figures in fast_math.h's comments and in the SSU contract.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fast/common/tests/fast_math_ulp.h"

int main(int argc, char** argv) {
  using namespace ssmv::fm_test;
  const long long count = argc > 1 ? std::atoll(argv[1]) : 10000000LL;
  const unsigned long long seed = argc > 2 ? std::strtoull(argv[2], nullptr, 0) : 0x55u;
  const std::string only = argc > 3 ? argv[3] : "";
  struct Range {
    Function f;
    float lo, hi;
  };
  // exp: every argument with a finite rounded result (e^88.7229 > FLT_MAX) (δ·A ≤ 0 in use, A may be
  // 0, positive side for e^x in softplus); log1p: the e^x ≤ e^20 softplus passes it;
  // softplus: the dt range where it computes, including far below; sigmoid: every
  // argument whose result is not 0 or 1 after rounding, and the tails; silu (the Mamba-3 z
  // gate) likewise; tanh: where it is not ±1 after rounding, and every finite argument; cos
  // and sin: [-8, 8] (the Mamba-3 step's reduced angle, [0, fp32(2π)] and a few ULP either
  // side) and the whole domain [-2^21, 2^21] (absolute error there: ULPs near the zeros of
  // large arguments say little).
  const Range ranges[] = {
      {Function::exp, -104.0f, 88.72f},     {Function::exp, -87.0f, 0.0f},
      {Function::log1p, 0.0f, 536870912.0f}, {Function::softplus, -104.0f, 20.0f},
      {Function::softplus, 20.0f, 1.0e30f},  {Function::sigmoid, -87.0f, 110.0f},
      {Function::sigmoid, -1.0e30f, -87.0f},   {Function::silu, -87.0f, 110.0f},
      {Function::silu, -1.0e30f, -87.0f},      {Function::silu, 110.0f, 1.0e30f},
      {Function::tanh, -9.5f, 9.5f},           {Function::tanh, -3.0e38f, 3.0e38f},
      {Function::cos, -8.0f, 8.0f},            {Function::cos, -2097152.0f, 2097152.0f},
      {Function::sin, -8.0f, 8.0f},            {Function::sin, -2097152.0f, 2097152.0f},
  };
  for (const Range& r : ranges) {
    if (!only.empty() && function_name(r.f) != only) continue;
    const auto args = arguments(r.lo, r.hi, count, seed);
    const UlpStats s = measure(r.f, args);
    std::printf("%-8s [%g, %g]: %lld args, max %.4f ULP at x = %a, max abs error %a\n",
                function_name(r.f).c_str(), r.lo, r.hi, static_cast<long long>(s.count), s.max_ulp,
                s.worst_arg, s.max_abs);
  }
  return 0;
}
