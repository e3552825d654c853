// The problem description of the Mamba-3 SISO recurrence (docs/mamba3-semantics.md): shapes,
// formats, the input tensors of one call of mamba_ssm's Triton kernels (mamba3_siso_combined
// for a prefill, mamba3_siso_step for a decode step) and the optional four-part state the
// sequences start from. No MPFR, no CUDA.
//
// Semantics, per token t of sequence s and head h (g = h / (H/G)); upstream names in brackets:
//   λ = σ(trap[t,h]),  α = exp(adt[t,h]),  β = (1 − λ)·dt[t,h]·α,  γ = λ·dt[t,h]
//   θ[r] += π·tanh(angles[t,h,r])·dt[t,h]                       r < R
//   b = Rot(θ)(B[t,g,:] + B_bias[h,:])  [K]    c = Rot(θ)(C[t,g,:] + C_bias[h,:])  [Q]
//   S[p,n] = α·S[p,n] + β·b_prev[n]·x_prev[p] + γ·b[n]·x[t,h,p]            [V = x]
//   y[t,h,p] = Σ_n c[n]·S[p,n] + D[h]·x[t,h,p];  y = y·z·σ(z) if z is given
//   b_prev = b, x_prev = x[t,h,:]
// Rot(θ) turns each pair (2r, 2r+1), r < R, by θ[r]; pairs r >= R stay as they are.
#pragma once

#include <cstdint>
#include <vector>

#include "spec/format.h"
#include "spec/problem.h"  // ProblemError, kMaxTokens, kMaxStateElements

namespace ssmv::mamba3 {

struct Shape {
  std::vector<int64_t> cu_seqlens;  // [S+1]: sequence s owns packed tokens [cu[s], cu[s+1])
  int64_t H = 0;                    // heads [nheads]
  int64_t P = 0;                    // head dim of x and y [headdim_v]
  int64_t N = 0;                    // state dim [headdim_qk]; even (rotated in pairs)
  int64_t G = 0;                    // heads of B and C [nheads_qk]; G divides H
  int64_t R = 0;                    // rotary angles per head [headdim_angles]; 1 <= R <= N/2

  int64_t num_sequences() const { return cu_seqlens.empty() ? 0 : int64_t(cu_seqlens.size()) - 1; }
  int64_t num_tokens() const { return cu_seqlens.empty() ? 0 : cu_seqlens.back(); }
  int64_t seq_len(int64_t s) const { return cu_seqlens[s + 1] - cu_seqlens[s]; }
  int64_t group_of(int64_t h) const { return h / (H / G); }
};

struct Formats {
  // x, B, C, z, trap: mamba3_siso_combined casts them to bf16 before its kernels.
  Format input = Format::bf16;
  // angles: bf16 in mamba3_siso_combined (it casts them); the step kernel reads them as given.
  Format angles = Format::bf16;
  // The initial and returned S, b_prev and x_prev (fp32 in both kernels; the angle state is
  // always fp32).
  Format state = Format::fp32;
  Format output = Format::bf16;  // y
};

// What a decode step carries from one token to the next, per sequence and head
// [Angle_State, SSM_State, K_State, V_State]. All four are given or none (a zero start).
struct FourPartState {
  std::vector<float> angle;   // [S, H, R]     fp32: θ, any finite value (the kernels keep it in [0, 2π))
  std::vector<float> S;       // [S, H, P, N]  state format
  std::vector<float> B_prev;  // [S, H, N]     state format: the last token's b (bias added, rotated)
  std::vector<float> x_prev;  // [S, H, P]     state format: the last token's x

  bool empty() const { return angle.empty() && S.empty() && B_prev.empty() && x_prev.empty(); }
};

// All tensors are row-major and hold values exact in their format (a float holds every
// bf16, fp16 and fp32 value exactly). An optional tensor is absent when empty.
struct Problem {
  Shape shape;
  Formats formats;

  std::vector<float> x;       // [T, H, P]  input format  [V]
  std::vector<float> B;       // [T, G, N]  input format  [K]
  std::vector<float> C;       // [T, G, N]  input format  [Q]
  std::vector<float> dt;      // [T, H]     fp32  [DT]: the step size, softplus already applied
  std::vector<float> adt;     // [T, H]     fp32  [ADT]: the log-decay A·dt, formed by the caller
  std::vector<float> trap;    // [T, H]     input format  [Trap]: λ = σ(trap)
  std::vector<float> angles;  // [T, H, R]  angles format [Angles]: the angle rate before tanh
  std::vector<float> B_bias;  // [H, N]     fp32  [K_bias]
  std::vector<float> C_bias;  // [H, N]     fp32  [Q_bias]
  std::vector<float> D;       // [H]        fp32, or empty
  std::vector<float> z;       // [T, H, P]  input format, or empty  [Z]
  FourPartState initial;      // empty: every sequence starts from θ = 0, S = 0, b_prev = 0, x_prev = 0

  bool has_D() const { return !D.empty(); }
  bool has_z() const { return !z.empty(); }
  bool has_initial_state() const { return !initial.empty(); }

  // Index helpers for the row-major layouts above.
  int64_t x_index(int64_t t, int64_t h, int64_t p) const { return (t * shape.H + h) * shape.P + p; }
  int64_t bc_index(int64_t t, int64_t g, int64_t n) const { return (t * shape.G + g) * shape.N + n; }
  int64_t th_index(int64_t t, int64_t h) const { return t * shape.H + h; }  // dt, adt, trap
  int64_t angle_index(int64_t t, int64_t h, int64_t r) const { return (t * shape.H + h) * shape.R + r; }
  int64_t bias_index(int64_t h, int64_t n) const { return h * shape.N + n; }
  // The four-part state, sequence s (the same layouts for the returned state).
  int64_t angle_state_index(int64_t s, int64_t h, int64_t r) const { return (s * shape.H + h) * shape.R + r; }
  int64_t state_index(int64_t s, int64_t h, int64_t p, int64_t n) const {
    return ((s * shape.H + h) * shape.P + p) * shape.N + n;
  }
  int64_t b_prev_index(int64_t s, int64_t h, int64_t n) const { return (s * shape.H + h) * shape.N + n; }
  int64_t x_prev_index(int64_t s, int64_t h, int64_t p) const { return (s * shape.H + h) * shape.P + p; }
};

// Throws ssmv::ProblemError naming the field and value: non-positive sizes, G not dividing
// H, N odd, R outside [1, N/2], cu_seqlens not starting at 0 / decreasing / empty sequences,
// tensor sizes that disagree with the shape, a four-part state given in part, values not
// exact in their format, NaN or Inf, a block-scaled input, angle or output format.
void validate(const Problem& p);

}  // namespace ssmv::mamba3
