// The fp32 arithmetic shared by the Mamba-3 host emulations (step_emulation.cpp,
// prefill_emulation.cpp): native fp32 operations with optional contraction and the Monte Carlo
// noise of EmulationOptions::noise_seed, the store of a value in a narrower format, the angle's
// reduction and the turn of a pair.
// Internal to verify/bound/mamba3/.
#pragma once

#include <cmath>
#include <cstdint>

#include "spec/format.h"
#include "spec/splitmix.h"
#include "spec/mamba3/contract.h"  // kTwoPiF32

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

// θ − TWO_PI·floor(θ / TWO_PI) (angle_dt.py:108, :117; mamba3_siso_step.py:156): the division,
// floor, then the product and the subtraction (one FMA when fused).
inline float reduce_angle(Ops& op, float th) {
  const float k = std::floor(op.div(th, ssmv::mamba3::kTwoPiF32));
  return op.mul_add(-ssmv::mamba3::kTwoPiF32, k, th);
}

// A pair (u0, u1) turned by (c, s) (mamba3_siso_fwd.py:333–334, 348–349; mamba3_siso_step.py:166–174):
// u0·c − u1·s and u0·s + u1·c; the first product of each contracts with the sum when fused.
inline void turn(Ops& op, float& u0, float& u1, float c, float s) {
  const float a = op.mul(u1, s), b = op.mul(u1, c);
  const float v0 = op.mul_add(u0, c, -a), v1 = op.mul_add(u0, s, b);
  u0 = v0;
  u1 = v1;
}

}  // namespace ssmv::bound::mamba3::detail
