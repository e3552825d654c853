// Error of the portable transcendentals (fast/common/fast_math.h) against MPFR, in fp32
// ULPs of the exact result (spec/format.h ulp_of). Shared by the unit test and by the
// ssmv_fast_math_ulp tool that produced the figures stated in fast_math.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ssmv::fm_test {

enum class Function { exp, log1p, softplus, sigmoid, silu, tanh, cos, sin };
std::string function_name(Function f);

// The exact value (MPFR, 128 bits) rounded to the nearest double.
double exact(Function f, float x);
float computed(Function f, float x);

struct UlpStats {
  double max_ulp = 0;      // max |computed − exact| / ulp_fp32(exact)
  float worst_arg = 0;     // argument of max_ulp
  double max_abs = 0;      // max |computed − exact|
  int64_t count = 0;       // arguments measured
};

// Every bf16 value in [lo, hi] plus `random_count` random fp32 arguments in [lo, hi]
// (half uniform in value, half uniform random bit patterns kept when inside [lo, hi]),
// from the given seed.
std::vector<float> arguments(float lo, float hi, int64_t random_count, uint64_t seed);
UlpStats measure(Function f, const std::vector<float>& args);

}  // namespace ssmv::fm_test
