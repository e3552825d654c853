// The fp32 arithmetic shared by the Mamba-3 host emulations (step_emulation.cpp,
// prefill_emulation.cpp): native fp32 operations with optional contraction and the Monte Carlo
// noise of EmulationOptions::noise_seed, and the store of a value in a narrower format.
// Internal to verify/bound/mamba3/.
#pragma once

#include <cmath>
#include <cstdint>

#include "spec/format.h"
#include "spec/splitmix.h"

namespace ssmv::bound::mamba3::detail {

// Rounds an fp32 value to `f` (to nearest even) and back: the store of a value in the state or
// output format, or a .to(tl.bfloat16) before a dot.
inline float to_format(Format f, float v) { return f == Format::fp32 ? v : float(round_value(f, double(v))); }

// The fp32 operations of one emulation: native fp32 arithmetic, or with a seed the Monte Carlo
// model of EmulationOptions::noise_seed (a splitmix64 stream, one draw per operation, in the
// order the emulation performs them).
class Ops {
 public:
  Ops(bool fused, uint64_t seed) : fused_(fused), on_(seed != 0), state_(seed) {}
  float mul(float a, float b) { return on_ ? noisy(double(a) * double(b)) : a * b; }
  float add(float a, float b) { return on_ ? noisy(double(a) + double(b)) : a + b; }
  float sub(float a, float b) { return on_ ? noisy(double(a) - double(b)) : a - b; }
  float div(float a, float b) { return on_ ? noisy(double(a) / double(b)) : a / b; }
  // a·b + c: one rounding when the kernel fuses it, two otherwise (the product's, then the sum's).
  float mul_add(float a, float b, float c) {
    if (fused_) return on_ ? noisy(double(a) * double(b) + double(c)) : std::fma(a, b, c);
    return add(mul(a, b), c);
  }

 private:
  float noisy(double v) {
    const uint64_t z = splitmix64_next(state_);
    const double uniform = double(z >> 11) * 0x1p-53 * 2 - 1;  // in [-1, 1)
    return float(v + uniform * 0x1p-24 * std::fabs(v));
  }
  bool fused_, on_;
  uint64_t state_;
};

}  // namespace ssmv::bound::mamba3::detail
