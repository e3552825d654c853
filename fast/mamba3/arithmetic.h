// The per-thread arithmetic of the bundled Mamba-3 SISO decode step, written once and compiled
// twice: by nvcc into the kernel (kernels.cu) and by the C++ compiler into the host twin
// (twin.cpp). Every rounding is explicit: fp32 operations in source order (contraction is off on
// both compilers), fm::fma_rn where the kernel fuses, transcendentals from
// fast/common/fast_math.h (tanh, cos, sin, exp, sigmoid, silu), IEEE division.
//
// Rounding points per (sequence b, head h) of one launch, token t = token[b]; the numbers are the
// rows of docs/mamba3-bounds.md §2 (the Triton step kernel's), fused where the Triton kernel may
// fuse (its enable_fp_fusion), which the bound covers:
//   pair r < N/2 (pair_step):
//     1  q = fl(C + C_bias), k = fl(B + B_bias) for both elements of the pair
//     2  tp = fl(fm::tanh(angles[r]) · π_f)                      (r < R; else θ = 0, no turn)
//     3  θ' = fma(tp, dt, θ_prev)
//     4  θ  = fma(−2π_f, floor(fl(θ' / 2π_f)), θ')               (IEEE division)
//     5  angle_state[r] = θ (fp32)
//     6  c = fm::cos(θ), s = fm::sin(θ)                          (θ in [0, 2π_f] and a few ULP)
//     7  turn of (u0, u1): fma(u0, c, −fl(u1·s)), fma(u0, s, fl(u1·c)), for q and for k
//   gates (every thread the same scalars):
//     9  α = fm::exp(adt)                                        (the contract's exp, whole)
//     10 λ = fm::sigmoid(trap)
//     11 β = fl(fl(α·dt)·fl(1 − λ))
//     12 γ = fl(λ·dt)
//   row p < P (row_step), n = 0, 1, …, N−1 in order:
//     13 diff = fma(fl(γ·x), k[n], fl(fl(β·x_prev)·k_prev[n]))
//     14 S = fma(S, α, diff)                                     (S stays fp32: 15 stores it as is)
//     16 acc = fma(S, q[n], acc) from acc = +0                    (fp32 operands, a fixed-order chain)
//     17 acc = fma(D, x, acc)                                     (if D)
//     18 acc = fl(acc · fm::silu(z))                              (if z; silu = fl(z·fm::sigmoid(z)))
//     19 y = acc rounded to nearest even in the output format
//     20 x_prev = x (exact: the state is fp32)
//   8  k_prev[n] = k[n] (fp32), after every pair has read the old k_prev
#pragma once

#include <cstdint>

#include "fast/common/fast_math.h"
#include "fast/common/hd.h"
#include "fast/mamba3/params.h"

namespace ssmv::mamba3_step {

// The kernel's fp32 constants: fp32(π) = 3.14159274 and 2·that (spec/mamba3/contract.h: kPiF32,
// kTwoPiF32; contract.cpp checks they are equal).
inline constexpr float kPi = 0x1.921fb6p+1f;
inline constexpr float kTwoPi = 0x1.921fb6p+2f;

// An input value: bf16 bits widened (exact), or fp32.
SSMV_HD SSMV_FORCEINLINE float load(Format f, const void* p, int64_t i) {
  if (f == Format::bf16) return fm::float_of(uint32_t(static_cast<const uint16_t*>(p)[i]) << 16);
  return static_cast<const float*>(p)[i];
}

// fp32 to bf16 bits, rounded to nearest even (overflow to ±Inf); NaN stays a quiet NaN.
SSMV_HD SSMV_FORCEINLINE uint16_t bf16_bits(float v) {
  const uint32_t b = fm::bits_of(v);
  if ((b & 0x7fffffffu) > 0x7f800000u) return uint16_t((b >> 16) | 0x0040u);
  return uint16_t((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
}

SSMV_HD SSMV_FORCEINLINE void store(Format f, void* p, int64_t i, float v) {
  if (f == Format::bf16) {
    static_cast<uint16_t*>(p)[i] = bf16_bits(v);
  } else {
    static_cast<float*>(p)[i] = v;
  }
}

// floor for fp32, exact: through a truncating conversion below 2^23 (above, every fp32 value is
// an integer; NaN and ±Inf pass through).
SSMV_HD SSMV_FORCEINLINE float floor_f32(float q) {
  if (!(fm::float_of(fm::bits_of(q) & 0x7fffffffu) < 0x1p23f)) return q;
  const float t = static_cast<float>(static_cast<int32_t>(q));
  return t > q ? t - 1.0f : t;
}

// Rows 2–6: the new angle of one pair from the rate a, dt and the stored angle; its cos and sin.
struct PairAngle {
  float theta, c, s;
};
SSMV_HD SSMV_FORCEINLINE PairAngle angle_step(float a, float dt, float prev) {
  const float tp = fm::tanh(a) * kPi;
  const float th = fm::fma_rn(tp, dt, prev);
  const float k = floor_f32(th / kTwoPi);
  const float r = fm::fma_rn(-kTwoPi, k, th);
  return {r, fm::cos(r), fm::sin(r)};
}

// Row 7: (u0, u1) turned by (c, s).
SSMV_HD SSMV_FORCEINLINE void turn(float& u0, float& u1, float c, float s) {
  const float a = u1 * s, b = u1 * c;
  const float v0 = fm::fma_rn(u0, c, -a), v1 = fm::fma_rn(u0, s, b);
  u0 = v0;
  u1 = v1;
}

// Rows 9–12.
struct Gates {
  float alpha, beta, gamma;
};
SSMV_HD SSMV_FORCEINLINE Gates gates(float adt, float dt, float trap) {
  const float alpha = fm::exp(adt);
  const float lam = fm::sigmoid(trap);
  const float ad = alpha * dt;
  const float om = 1.0f - lam;
  return {alpha, ad * om, lam * dt};
}
SSMV_HD SSMV_FORCEINLINE Gates gates(const Params& p, int64_t t, int64_t h) {
  const int64_t i = t * p.H + h;
  return gates(p.adt[i], p.dt[i], load(p.input, p.trap, i));
}

// Rows 1–7 for pair r of sequence b, head h, token t: the angle (stored), the turned q and k of
// the pair into q[2r..2r+1], k[2r..2r+1], and the old k_prev into kprev[2r..2r+1]. Reads and
// writes only pair r's angle state.
SSMV_HD SSMV_FORCEINLINE void pair_step(const Params& p, int64_t b, int64_t h, int64_t t, int64_t r, float* q,
                                        float* k, float* kprev) {
  const int64_t g = h / (p.H / p.G);
  const int64_t bc = (t * p.G + g) * p.N + 2 * r, bias = h * p.N + 2 * r, bp = (b * p.H + h) * p.N + 2 * r;
  float q0 = load(p.input, p.C, bc) + p.C_bias[bias], q1 = load(p.input, p.C, bc + 1) + p.C_bias[bias + 1];
  float k0 = load(p.input, p.B, bc) + p.B_bias[bias], k1 = load(p.input, p.B, bc + 1) + p.B_bias[bias + 1];
  if (r < p.R) {
    const int64_t ai = (b * p.H + h) * p.R + r;
    const PairAngle a = angle_step(load(p.angles_format, p.angles, (t * p.H + h) * p.R + r), p.dt[t * p.H + h],
                                   p.angle_state[ai]);
    p.angle_state[ai] = a.theta;
    turn(q0, q1, a.c, a.s);
    turn(k0, k1, a.c, a.s);
  }
  q[2 * r] = q0;
  q[2 * r + 1] = q1;
  k[2 * r] = k0;
  k[2 * r + 1] = k1;
  kprev[2 * r] = p.B_prev[bp];
  kprev[2 * r + 1] = p.B_prev[bp + 1];
}

// Rows 13–20 for row pp: the state row updated in place, y stored, x_prev[pp] = x. Reads the
// turned q, k and the old k_prev of every n (pair_step of every pair must have run).
SSMV_HD SSMV_FORCEINLINE void row_step(const Params& p, int64_t b, int64_t h, int64_t t, int64_t pp, const Gates& g,
                                       const float* q, const float* k, const float* kprev) {
  const int64_t xi = (t * p.H + h) * p.P + pp, xs = (b * p.H + h) * p.P + pp;
  const float x = load(p.input, p.x, xi);
  const float bx = g.beta * p.x_prev[xs];
  const float gx = g.gamma * x;
  float* S = p.S + ((b * p.H + h) * p.P + pp) * p.N;
  float acc = 0.0f;
  for (int64_t n = 0; n < p.N; ++n) {
    const float d1 = bx * kprev[n];
    const float diff = fm::fma_rn(gx, k[n], d1);
    const float s = fm::fma_rn(S[n], g.alpha, diff);
    S[n] = s;
    acc = fm::fma_rn(s, q[n], acc);
  }
  if (p.has_D()) acc = fm::fma_rn(p.D[h], x, acc);
  if (p.has_z()) acc = acc * fm::silu(load(p.input, p.z, xi));
  store(p.output, p.y, xi, acc);
  p.x_prev[xs] = x;
}

// Row 8 for element n, once every pair_step of (b, h) has read the old k_prev.
SSMV_HD SSMV_FORCEINLINE void store_b_prev(const Params& p, int64_t b, int64_t h, int64_t n, const float* k) {
  p.B_prev[(b * p.H + h) * p.N + n] = k[n];
}

}  // namespace ssmv::mamba3_step
