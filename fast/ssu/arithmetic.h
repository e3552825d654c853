// The per-thread arithmetic of SSU, written once and compiled twice: by nvcc into the
// kernel (kernels.cu) and by the C++ compiler into the host twin (twin.cpp).
// Every rounding is explicit: fp32 operations in source order (contraction is off on both
// compilers), fma_rn where the kernel fuses, transcendentals from fast/common/fast_math.h.
//
// Rounding points, per (request, head, token):
//   d  = fm::delta(dt, dt_bias): clamp(softplus?(fl(dt + dt_bias)))  (recurrence_math.h)
//   a  = fm::exp(fl(d · A))
// per state dim n (one lane, reused for every row p):
//   dB = fl(d · B[n])
// per (p, n):
//   S  = fma_rn(dB, x[p], fl(a · S))            (two roundings; S stays fp32 across tokens)
// per p, from the unrounded fp32 S:
//   acc_lane = fma_rn(C[n], S[n], acc_lane)     over the lane's n in layout order
//   sum      = butterfly over the row's L lanes (lane_layout; xor L/2, ..., 2, 1: 5 levels
//              for L = 32, 4 for L = 16; fp32 adds)
//   y  = fm::output_epilogue: fma_rn(D, x[p], sum) (y = sum without D), then
//        fl(y · fl(z · fm::sigmoid(z))) with z   (recurrence_math.h)
//   y rounded to nearest even in the output format; S likewise in the state format when
//   it is stored (final state, per-token states).
#pragma once

#include "fast/common/fast_math.h"
#include "fast/common/hd.h"
#include "fast/common/recurrence_math.h"
#include "fast/common/storage_bytes.h"

namespace ssmv::ssu {

inline constexpr int kWarp = 32;

// Launch geometry: one warp (or half-warp, lane_layout) per state row (p) at a time,
// kRowsPerWarp rows per warp,
// kWarpsPerBlock warps per block; a block covers kRowsPerBlock rows of one (request, head).
// It decides only which thread computes a row, never how: it does not affect any bit.
// SSMV_SSU_ROWS_PER_WARP and SSMV_SSU_MIN_BLOCKS (resident blocks per multiprocessor
// asked of the register allocator; 1: no register cap) exist for the benchmark's
// variants (bench/ssu) only.
#ifndef SSMV_SSU_ROWS_PER_WARP
#define SSMV_SSU_ROWS_PER_WARP 8
#endif
// Defaults: the fastest geometry measured on the H200 (bench/NOTES.md, SSU call 4:
// 8 rows per warp, 2 groups of them for 16-bit states, at most 80 registers for 6 blocks
// per multiprocessor).
#ifndef SSMV_SSU_MIN_BLOCKS
#define SSMV_SSU_MIN_BLOCKS 6
#endif
// Groups of kRowsPerWarp rows per warp for 16-bit states (the kernel's single-token path
// holds them as raw bits, two elements per register; fp32 states: one group).
// SSMV_SSU_GROUPS_16BIT exists for the benchmark's variants too.
#ifndef SSMV_SSU_GROUPS_16BIT
#define SSMV_SSU_GROUPS_16BIT 2
#endif
inline constexpr int kGroups16 = SSMV_SSU_GROUPS_16BIT;
// The streamed kernel (stream.cuh: persistent warps, the next item's state in flight)
// exists for 16-bit states (and fp32 with SSMV_SSU_STREAM_FP32=1: slower on the H200, 83 %
// against 88 % of the copy bandwidth at batch 256) and is capped at
// SSMV_SSU_STREAM_MIN_BLOCKS resident blocks per multiprocessor (4: 128 registers; 3 ran
// as fast, 5 and 6 slower: bench/NOTES.md, SSU call 6). Both exist for the benchmark's
// variants; launch.h's Kernel picks the kernel at run time.
#ifndef SSMV_SSU_STREAM_FP32
#define SSMV_SSU_STREAM_FP32 0
#endif
// Groups of kRowsPerWarp rows in one item of the streamed kernel for 16-bit (fp32) states (its
// rows wait in shared memory, not in registers; each item pays its token's scalars, index
// loads and input loads once, about 320 of its ~1600 warp instructions at one token): the
// same as the per-item kernel's unless set for the benchmark's variants. 4 groups (stream_g4)
// were slower on the H200, 102 against 83 µs at batch 256: two stages of 32 rows take 64 KB of
// shared memory per block, so 3 blocks fit per SM instead of 4 (bench/NOTES.md, session 9).
#ifndef SSMV_SSU_STREAM_GROUPS
#define SSMV_SSU_STREAM_GROUPS SSMV_SSU_GROUPS_16BIT
#endif
#ifndef SSMV_SSU_STREAM_GROUPS_FP32
#define SSMV_SSU_STREAM_GROUPS_FP32 1
#endif
#ifndef SSMV_SSU_STREAM_MIN_BLOCKS
#define SSMV_SSU_STREAM_MIN_BLOCKS 4
#endif
inline constexpr int kWarpsPerBlock = 4;
inline constexpr int kRowsPerWarp = SSMV_SSU_ROWS_PER_WARP;
inline constexpr int kRowsPerBlock = kWarpsPerBlock * kRowsPerWarp;
// Most state elements one lane holds for one row: J·V ≤ 8 for N ≤ 256 (see lane_layout).
inline constexpr int kMaxLaneElements = 8;

// State elements of one row owned by a lane: n = (j·L + u)·V + v for v < V, j < J, n < N,
// where the row is split among L lanes (32, or 16: each half-warp then holds its own row)
// and u < L is the lane's index among them. V, J and L depend only on N and the state
// element size, so the GPU and the twin agree on every lane's partial sum whatever loads
// the kernel uses.
struct LaneLayout {
  int V = 1;        // consecutive elements per lane and chunk
  int J = 1;        // chunks per lane
  int L = kWarp;    // lanes per row
};

// Half-warp rows: when N = 16·V with V ∈ {2, 4, 8} and V·bytes ≤ 16 (N = 32, 64, 128 for
// 16-bit states; 32, 64 for fp32) a row is split among 16 lanes of V elements, one access
// of V·bytes each, where 32 lanes could only take V/2 (8-byte accesses for a bf16 row of
// 128): half the load, store and shuffle instructions per row (bf16, N = 128, batch 256 on
// the H200: 171 µs with whole-warp rows, 154 µs with half-warp rows; bench/NOTES.md, SSU
// call 3).
// Otherwise L = 32, V = the widest of 8, 4, 2, 1 elements that fits 16 bytes and keeps all
// 32 lanes busy (32·V ≤ N); J = ceil(N / (32·V)) ≤ 2 for N ≤ 256, so a lane holds at most
// 8 elements of a row.
SSMV_HD SSMV_FORCEINLINE LaneLayout lane_layout(int N, int state_bytes) {
  LaneLayout l;
  for (int v = 8; v >= 2; v /= 2) {
    if (v * state_bytes <= 16 && N == 16 * v) {
      l.V = v;
      l.L = 16;
      return l;
    }
  }
  for (int v = 8; v >= 2; v /= 2) {
    if (v * state_bytes <= 16 && kWarp * v <= N) {
      l.V = v;
      break;
    }
  }
  l.J = (N + kWarp * l.V - 1) / (kWarp * l.V);
  return l;
}

// u: the lane's index among the L lanes of its row (lane % L).
SSMV_HD SSMV_FORCEINLINE int lane_element(const LaneLayout& l, int u, int j, int v) { return (j * l.L + u) * l.V + v; }

// The octet kernel (octet.cuh) gives one lane the F = L/8 logical lanes m + 8f (f < F, m < 8)
// of a row: part[f] is logical lane m + 8f's partial. This runs the butterfly levels whose
// partners are inside the lane (offset o >= 8: logical lane m + 8f meets m + 8(f ^ o/8)) and
// returns the value logical lane m then holds; the levels 4, 2, 1 follow across the octet, and
// the lane ends with the bits of the twin's butterfly_sum (twin.h; tests/contract_test.cpp,
// OctetFold).
template <int F>
SSMV_HD SSMV_FORCEINLINE float fold_logical_lanes(float (&part)[F]) {
  for (int o = F / 2; o >= 1; o /= 2) {
    for (int f = 0; f < o; ++f) part[f] = part[f] + part[f + o];
  }
  return part[0];
}

struct TokenScalars {
  float delta;  // δ after bias, softplus and clamp
  float decay;  // a = exp(δ·A)
};

SSMV_HD SSMV_FORCEINLINE TokenScalars token_scalars(float dt, bool has_bias, float bias, bool softplus,
                                                    float lo, float hi, float A) {
  const float d = fm::delta(dt, has_bias, bias, softplus, lo, hi);
  return {d, fm::exp(d * A)};
}

SSMV_HD SSMV_FORCEINLINE float scaled_B(float delta, float b) { return delta * b; }

SSMV_HD SSMV_FORCEINLINE float update_state(float s, float decay, float dB, float x) {
  return fm::fma_rn(dB, x, decay * s);
}

SSMV_HD SSMV_FORCEINLINE float accumulate(float acc, float c, float s) { return fm::fma_rn(c, s, acc); }

}  // namespace ssmv::ssu
