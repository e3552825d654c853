// The five chunk_scan stages as CUDA kernels (sm_90). Each block's per-element fp32
// arithmetic comes from arithmetic.h, shared with the host twin (twin.cpp), and its
// reductions from warp_tile.cuh; the comments give the twin's matching loop.
//   In: storage type of x, dt, B, C, z (float, __nv_bfloat16, __half)
//   Op: operand type of the reductions: In on tensor cores (production contract with a
//       bf16/fp16 input), float for the SIMT fmaf path; R(v) = to_op<Op>(v).
#pragma once

#include <type_traits>

#include "fast/chunk_scan/params.h"
#include "fast/chunk_scan/arithmetic.h"
#include "fast/chunk_scan/warp_tile.cuh"

namespace ssmv::chunk_scan::gpu {

template <class T> __device__ __forceinline__ float to_f(T v);
template <> __device__ __forceinline__ float to_f<float>(float v) { return v; }
template <> __device__ __forceinline__ float to_f<__nv_bfloat16>(__nv_bfloat16 v) { return __bfloat162float(v); }
template <> __device__ __forceinline__ float to_f<__half>(__half v) { return __half2float(v); }

template <class Op> __device__ __forceinline__ Op to_op(float v);
template <> __device__ __forceinline__ float to_op<float>(float v) { return v; }
template <> __device__ __forceinline__ __nv_bfloat16 to_op<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }
template <> __device__ __forceinline__ __half to_op<__half>(float v) { return __float2half_rn(v); }

// Round to nearest even into a format chosen at run time (outputs and states).
__device__ __forceinline__ void store_fmt(void* base, int64_t i, Format f, float v) {
  if (f == Format::fp32) static_cast<float*>(base)[i] = v;
  else if (f == Format::bf16) static_cast<__nv_bfloat16*>(base)[i] = __float2bfloat16_rn(v);
  else static_cast<__half*>(base)[i] = __float2half_rn(v);
}
__device__ __forceinline__ float load_fmt(const void* base, int64_t i, Format f) {
  if (f == Format::fp32) return static_cast<const float*>(base)[i];
  if (f == Format::bf16) return __bfloat162float(static_cast<const __nv_bfloat16*>(base)[i]);
  return __half2float(static_cast<const __half*>(base)[i]);
}

// Programmatic dependent launch (sm_90, griddepcontrol; gpu.cu launches the
// tensor-core path's stages b–e so inside launch()). allow_next_stage: this block lets the next stage's launch begin
// (its blocks may become resident and run up to their wait_prior_stages()).
// wait_prior_stages: returns once the stage launched before this one has completed and its
// writes are visible; a no-op in a kernel not launched programmatically. Every kernel of
// stages b–e calls it in every block before it reads an intermediate or writes anything.
__device__ __forceinline__ void allow_next_stage() { asm volatile("griddepcontrol.launch_dependents;" ::: "memory"); }
__device__ __forceinline__ void wait_prior_stages() { asm volatile("griddepcontrol.wait;" ::: "memory"); }

// One 64-row slab of a warp tile: mma steps [0, end_step) or fmaf up to per-row limits.
template <class Op>
__device__ __forceinline__ void slab_product(const Op* sA, const Op* sB, int end_step, int limit_lo,
                                             int limit_hi, float (&acc)[8][4]) {
  if constexpr (std::is_same_v<Op, float>) {
    warp_tile_fma(sA, sB, limit_lo, limit_hi, acc);
  } else {
    warp_tile_mma<Op>(sA, sB, 0, end_step, acc);
  }
}

// Stores a warp's accumulators, rows row0 + (g, g+8), columns col0 + 8f + 2q (+1), where
// row < rows and col < cols, through put(row, col, value).
template <class Put>
__device__ __forceinline__ void for_each_acc(const float (&acc)[8][4], int row0, int col0, int rows,
                                             int cols, Put put) {
  const int lane = threadIdx.x & 31, g = lane >> 2, q = lane & 3;
#pragma unroll
  for (int f = 0; f < 8; ++f) {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int row = row0 + g + (e >= 2 ? 8 : 0), col = col0 + 8 * f + 2 * q + (e & 1);
      if (row < rows && col < cols) put(row, col, acc[f][e]);
    }
  }
}

// Stage (e) epilogue for a warp's accumulators (rows m = row0 + (g, g+8) < len of the
// chunk starting at token t0, columns p0 + 8f + 2q (+1) < P; d_tile[j] = D of column
// p0 + j, from load_chunk_scalars): y = fma(D, x, acc), then
// ·(z·σ(z)), rounded to the output format (twin: fm::output_epilogue, round_value). x and z are
// gathered into registers before the first store, so the loads overlap.
template <class In>
__device__ __forceinline__ void store_outputs(const float (&acc)[8][4], const Params& p, int t0,
                                              int h, int row0, int p0, int len, const float* d_tile) {
  const int lane = threadIdx.x & 31, g = lane >> 2, q = lane & 3;
  const In* x = static_cast<const In*>(p.x);
  const In* z = static_cast<const In*>(p.z);
  float xv[8][4], zv[8][4];
#pragma unroll
  for (int f = 0; f < 8; ++f) {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int m = row0 + g + (e >= 2 ? 8 : 0), pp = p0 + 8 * f + 2 * q + (e & 1);
      const bool in = m < len && pp < p.P;
      const int64_t t = t0 + m;
      xv[f][e] = in ? to_f(x[t * p.x_st + h * p.x_sh + pp]) : 0.0f;
      zv[f][e] = in && p.has_z() ? to_f(z[t * p.z_st + h * p.z_sh + pp]) : 0.0f;
    }
  }
#pragma unroll
  for (int f = 0; f < 8; ++f) {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int m = row0 + g + (e >= 2 ? 8 : 0), pp = p0 + 8 * f + 2 * q + (e & 1);
      if (m >= len || pp >= p.P) continue;
      const float v = fm::output_epilogue(acc[f][e], p.has_D(), d_tile[pp - p0], xv[f][e], p.has_z(), zv[f][e]);
      store_fmt(p.y, int64_t(t0 + m) * p.y_st + int64_t(h) * p.y_sh + pp, p.output, v);
    }
  }
}

// acc rows (g, g+8) of the warp tile multiplied by d_lo, d_hi (fp32 products).
__device__ __forceinline__ void scale_rows(float (&acc)[8][4], float d_lo, float d_hi) {
#pragma unroll
  for (int f = 0; f < 8; ++f) {
    acc[f][0] = acc[f][0] * d_lo;
    acc[f][1] = acc[f][1] * d_lo;
    acc[f][2] = acc[f][2] * d_hi;
    acc[f][3] = acc[f][3] * d_hi;
  }
}

// Stage (e) prologue: the chunk's cumulative sums and δ (cs, delta: [len]), the
// inter-chunk decays exp(cs_m) of the tile's rows m0 + r (decay: [64], 0 past the chunk)
// and D of the tile's columns p0 + r (d_tile: [64], 0 without D).
// base = h·T + t0 indexes the chunk's first token in the [H, T] intermediates.
__device__ __forceinline__ void load_chunk_scalars(const Params& p, int64_t base, int len, int m0,
                                                   int h, int p0, float* cs, float* delta, float* decay,
                                                   float* d_tile) {
  for (int j = threadIdx.x; j < len; j += kThreads) {
    cs[j] = p.cumsum[base + j];
    delta[j] = p.delta[base + j];
  }
  for (int r = threadIdx.x; r < kTile; r += kThreads) {
    decay[r] = m0 + r < len ? ssmv::fm::exp(p.cumsum[base + m0 + r]) : 0.0f;
    const int pp = p0 + r;
    d_tile[r] = !p.has_D() || pp >= p.P ? 0.0f : p.D_per_dim() ? p.D[int64_t(h) * p.P + pp] : p.D[h];
  }
}

// (a) grid (NC, H), block L threads. δ per token; then the cumulative sum in increasing k
// by one thread (twin: cs = j == 0 ? dA : cs + dA); exp(cs_last) per chunk and head. A
// serial sum reading dA in 16-value batches one batch ahead (no shared load in the chain of
// additions) took as long (bench/NOTES.md, fourth round: 10.6–11.8 µs alone either way):
// the stage is launch and load latency, not the 256-step chain.
template <class In>
__global__ void cumsum_kernel(const Params p) {
  __shared__ float s_dA[256];
  allow_next_stage();
  const int c = blockIdx.x, h = blockIdx.y, j = threadIdx.x;
  const int t0 = p.chunk_start[c], len = p.chunk_len[c];
  const int64_t hT = int64_t(h) * p.T;
  if (j < len) {
    const In* dt = static_cast<const In*>(p.dt);
    const float d = fm::delta(to_f(dt[int64_t(t0 + j) * p.dt_st + h]), p.has_dt_bias(),
                              p.has_dt_bias() ? p.dt_bias[h] : 0.0f, p.dt_softplus, p.dt_lo, p.dt_hi);
    s_dA[j] = d * p.A[h];
    p.delta[hT + t0 + j] = d;
  }
  __syncthreads();
  if (j == 0) {
    float cs = s_dA[0];
    for (int i = 1; i < len; ++i) {
      cs = cs + s_dA[i];
      s_dA[i] = cs;
    }
    p.chunk_decay[int64_t(c) * p.H + h] = ssmv::fm::exp(cs);
  }
  __syncthreads();
  if (j < len) p.cumsum[hT + t0 + j] = s_dA[j];
}

// (b) grid (⌈P/64⌉·⌈N/64⌉, H, NC): chunk_state[p,n] = Σ_k x_k[p]·R(B_k[n]·scale_k) over
// k < len in slabs of 32 (twin: chain(x, bs, len)).
template <class In, class Op>
__global__ void __launch_bounds__(kThreads) chunk_state_kernel(const Params p) {
  constexpr int KS = SlabLayout<Op>::stride;
  __shared__ __align__(16) Op sA[kTile * KS];  // [p][k]
  __shared__ __align__(16) Op sB[kTile * KS];  // [n][k]
  __shared__ float s_scale[256];
  allow_next_stage();
  wait_prior_stages();
  const int c = blockIdx.z, h = blockIdx.y, warp = threadIdx.x >> 5;
  const int n_tiles = (p.N + kTile - 1) / kTile;
  const int p0 = (blockIdx.x / n_tiles) * kTile, n0 = (blockIdx.x % n_tiles) * kTile;
  const int g = h / (p.H / p.G);
  const int t0 = p.chunk_start[c], len = p.chunk_len[c];
  const int64_t hT = int64_t(h) * p.T;
  const float cs_last = p.cumsum[hT + t0 + len - 1];
  for (int j = threadIdx.x; j < len; j += kThreads) {
    s_scale[j] = state_scale(cs_last, p.cumsum[hT + t0 + j], p.delta[hT + t0 + j]);
  }
  const In* x = static_cast<const In*>(p.x);
  const In* B = static_cast<const In*>(p.B);
  float acc[8][4] = {};
  __syncthreads();
  for (int k0 = 0; k0 < len; k0 += kSlab) {
    for (int i = threadIdx.x; i < kTile * kSlab; i += kThreads) {
      const int r = i % kTile, kk = i / kTile, k = k0 + kk;
      const int64_t t = t0 + k;
      float xv = 0.0f, bv = 0.0f;
      if (k < len && p0 + r < p.P) xv = to_f(x[t * p.x_st + h * p.x_sh + p0 + r]);
      if (k < len && n0 + r < p.N) bv = to_f(B[t * p.b_st + g * p.b_sg + n0 + r]) * s_scale[k];
      sA[r * KS + kk] = to_op<Op>(xv);
      sB[r * KS + kk] = to_op<Op>(bv);
    }
    __syncthreads();
    const int kn = min(kSlab, len - k0);
    slab_product<Op>(sA + warp * 16 * KS, sB, (kn + 15) / 16, kn, kn, acc);
    __syncthreads();
  }
  float* out = p.chunk_state + (int64_t(c) * p.H + h) * p.P * p.N;
  const int N = p.N;
  for_each_acc(acc, p0 + warp * 16, n0, p.P, p.N,
               [&](int row, int col, float v) { out[int64_t(row) * N + col] = v; });
}

// (c) grid (⌈H·P·N/(256·E)⌉, min(S, 65535)), 256 threads; a thread owns E adjacent
// elements (e, e + 1) of one (h, p) row (E = 2 needs P·N even: 8-byte loads of the chunk
// states, one 4-byte store of a rounded 16-bit pair) and runs the chunks of each sequence
// in order (twin: the same loop): h_in = R(state); state = fma(exp(cs_last), state,
// chunk_state). The loads of 16/E chunks are issued before their sequential use.
template <class Op, int E>
__global__ void state_passing_kernel(const Params p) {
  static_assert(E == 1 || E == 2, "one or two elements per thread");
  constexpr int kAhead = 16 / E;
  allow_next_stage();
  wait_prior_stages();
  const int64_t per_seq = int64_t(p.H) * p.P * p.N;
  const int64_t e = E * (int64_t(blockIdx.x) * blockDim.x + threadIdx.x);  // (h, p, n)
  if (e >= per_seq) return;
  const int h = int(e / (int64_t(p.P) * p.N));
  Op* state_in = static_cast<Op*>(p.state_in);
  for (int s = blockIdx.y; s < p.S; s += gridDim.y) {
    const int64_t idx = int64_t(s) * per_seq + e;
    float state[E];
#pragma unroll
    for (int q = 0; q < E; ++q) state[q] = p.has_initial_state() ? load_fmt(p.initial_state, idx + q, p.state) : 0.0f;
    const int c_begin = p.seq_first_chunk[s], c_end = p.seq_first_chunk[s + 1];
    for (int c0 = c_begin; c0 < c_end; c0 += kAhead) {
      float cs[kAhead][E], decay[kAhead];
#pragma unroll
      for (int j = 0; j < kAhead; ++j) {
        const int c = c0 + j;
        if constexpr (E == 2) {
          const float2 v = c < c_end ? *reinterpret_cast<const float2*>(p.chunk_state + int64_t(c) * per_seq + e)
                                     : make_float2(0.0f, 0.0f);
          cs[j][0] = v.x;
          cs[j][1] = v.y;
        } else {
          cs[j][0] = c < c_end ? p.chunk_state[int64_t(c) * per_seq + e] : 0.0f;
        }
        decay[j] = c < c_end ? p.chunk_decay[int64_t(c) * p.H + h] : 0.0f;
      }
#pragma unroll
      for (int j = 0; j < kAhead; ++j) {
        const int c = c0 + j;
        if (c >= c_end) break;
        const int64_t i = int64_t(c) * per_seq + e;
        if constexpr (E == 2 && sizeof(Op) == 2) {
          Op pair[2] = {to_op<Op>(state[0]), to_op<Op>(state[1])};
          *reinterpret_cast<uint32_t*>(state_in + i) = *reinterpret_cast<const uint32_t*>(pair);
        } else if constexpr (E == 2) {
          *reinterpret_cast<float2*>(state_in + i) = make_float2(state[0], state[1]);
        } else {
          state_in[i] = to_op<Op>(state[0]);
        }
#pragma unroll
        for (int q = 0; q < E; ++q) state[q] = ssmv::fm::fma_rn(decay[j], state[q], cs[j][q]);
        if (p.want_boundary()) {
#pragma unroll
          for (int q = 0; q < E; ++q) store_fmt(p.boundary_states, i + q, p.state, state[q]);
        }
      }
    }
#pragma unroll
    for (int q = 0; q < E; ++q) store_fmt(p.final_state, idx + q, p.state, state[q]);
  }
}

// (d) grid ((L/64)², G, NC): CB[m,k] = Σ_n C_m[n]·B_k[n] for tiles on or below the
// diagonal (twin: chain(C_m, B_k, N)).
template <class In, class Op>
__global__ void __launch_bounds__(kThreads) cb_kernel(const Params p) {
  constexpr int KS = SlabLayout<Op>::stride;
  __shared__ __align__(16) Op sA[kTile * KS];  // [m][n]
  __shared__ __align__(16) Op sB[kTile * KS];  // [k][n]
  allow_next_stage();
  wait_prior_stages();
  const int c = blockIdx.z, g = blockIdx.y, warp = threadIdx.x >> 5;
  const int tiles = p.L / kTile;
  const int mt = blockIdx.x / tiles, kt = blockIdx.x % tiles;
  const int t0 = p.chunk_start[c], len = p.chunk_len[c];
  const int m0 = mt * kTile, k0 = kt * kTile;
  if (kt > mt || m0 >= len) return;
  const In* C = static_cast<const In*>(p.C);
  const In* B = static_cast<const In*>(p.B);
  float acc[8][4] = {};
  for (int n0 = 0; n0 < p.N; n0 += kSlab) {
    for (int i = threadIdx.x; i < kTile * kSlab; i += kThreads) {
      const int r = i / kSlab, kk = i % kSlab, n = n0 + kk;
      float cv = 0.0f, bv = 0.0f;
      if (m0 + r < len && n < p.N) cv = to_f(C[int64_t(t0 + m0 + r) * p.c_st + g * p.c_sg + n]);
      if (k0 + r < len && n < p.N) bv = to_f(B[int64_t(t0 + k0 + r) * p.b_st + g * p.b_sg + n]);
      sA[r * KS + kk] = to_op<Op>(cv);
      sB[r * KS + kk] = to_op<Op>(bv);
    }
    __syncthreads();
    const int kn = min(kSlab, p.N - n0);
    slab_product<Op>(sA + warp * 16 * KS, sB, (kn + 15) / 16, kn, kn, acc);
    __syncthreads();
  }
  float* out = p.cb + (int64_t(c) * p.G + g) * p.L * p.L;
  const int L = p.L;
  for_each_acc(acc, m0 + warp * 16, k0, len, len, [&](int row, int col, float v) {
    out[int64_t(row) * L + col] = v;
  });
}

// (e) grid (⌈L/64⌉·⌈P/64⌉, H, NC): the chunk scan output (twin: stage (e) loop).
template <class In, class Op>
__global__ void __launch_bounds__(kThreads) scan_kernel(const Params p) {
  constexpr int KS = SlabLayout<Op>::stride;
  __shared__ __align__(16) Op sA[kTile * KS];  // [m][n], then [m][k]
  __shared__ __align__(16) Op sB[kTile * KS];  // [p][n], then [p][k]
  __shared__ float s_cs[256], s_delta[256], s_decay[kTile], s_D[kTile];
  wait_prior_stages();
  const int c = blockIdx.z, h = blockIdx.y, warp = threadIdx.x >> 5;
  const int lane = threadIdx.x & 31, gl = lane >> 2;
  const int p_tiles = (p.P + kTile - 1) / kTile;
  const int m0 = (blockIdx.x / p_tiles) * kTile, p0 = (blockIdx.x % p_tiles) * kTile;
  const int t0 = p.chunk_start[c], len = p.chunk_len[c];
  if (m0 >= len) return;
  const int g = h / (p.H / p.G);
  const int64_t hT = int64_t(h) * p.T;
  load_chunk_scalars(p, hT + t0, len, m0, h, p0, s_cs, s_delta, s_decay, s_D);
  const In* x = static_cast<const In*>(p.x);
  const In* C = static_cast<const In*>(p.C);
  const Op* state_in = static_cast<const Op*>(p.state_in) + (int64_t(c) * p.H + h) * p.P * p.N;
  float acc[8][4] = {};

  // Inter-chunk term: Σ_n C_m[n]·R(h_in)[p,n] (twin: chain(C_m, h_in[p], N)).
  for (int n0 = 0; n0 < p.N; n0 += kSlab) {
    for (int i = threadIdx.x; i < kTile * kSlab; i += kThreads) {
      const int r = i / kSlab, kk = i % kSlab, n = n0 + kk;
      float cv = 0.0f;
      if (m0 + r < len && n < p.N) cv = to_f(C[int64_t(t0 + m0 + r) * p.c_st + g * p.c_sg + n]);
      sA[r * KS + kk] = to_op<Op>(cv);
      sB[r * KS + kk] = (p0 + r < p.P && n < p.N) ? state_in[int64_t(p0 + r) * p.N + n] : to_op<Op>(0.0f);
    }
    __syncthreads();
    const int kn = min(kSlab, p.N - n0);
    slab_product<Op>(sA + warp * 16 * KS, sB, (kn + 15) / 16, kn, kn, acc);
    __syncthreads();
  }
  scale_rows(acc, s_decay[warp * 16 + gl], s_decay[warp * 16 + gl + 8]);  // ×exp(cs_m) per row (twin: acc * decay_m)
  // Intra-chunk term on the same accumulator: Σ_{k≤m} R(w_mk)·x_k[p] (twin: chain(w_m,
  // x, m+1, acc)). Warp rows [mw, mw+16) take the 16-wide k-steps J with 16J ≤ mw, which
  // are exactly the twin's steps 0..⌊m/16⌋; fmaf rows stop at k = m.
  const int mw = m0 + warp * 16;
  const int k_end = min(m0 + kTile, len);
  const int L = p.L;
  const float* cb = p.cb + (int64_t(c) * p.G + g) * L * L;
  for (int k0 = 0; k0 < k_end; k0 += kSlab) {
    for (int i = threadIdx.x; i < kTile * kSlab; i += kThreads) {
      const int r = i / kSlab, kk = i % kSlab, m = m0 + r, k = k0 + kk;
      float w = 0.0f;
      if (k <= m && m < len) w = cb_weight(cb[int64_t(m) * L + k], s_cs[m], s_cs[k], s_delta[k]);
      sA[r * KS + kk] = to_op<Op>(w);
    }
    for (int i = threadIdx.x; i < kTile * kSlab; i += kThreads) {
      const int r = i % kTile, kk = i / kTile, k = k0 + kk;
      float xv = 0.0f;
      if (k < len && p0 + r < p.P) xv = to_f(x[int64_t(t0 + k) * p.x_st + h * p.x_sh + p0 + r]);
      sB[r * KS + kk] = to_op<Op>(xv);
    }
    __syncthreads();
    int end_step = 0;
    for (int s = 0; s < kSlab / 16; ++s) {
      if (k0 + 16 * s <= mw) end_step = s + 1;
    }
    const int lim_lo = max(0, min(min(mw + gl + 1, len) - k0, kSlab));
    const int lim_hi = max(0, min(min(mw + gl + 9, len) - k0, kSlab));
    slab_product<Op>(sA + warp * 16 * KS, sB, end_step, lim_lo, lim_hi, acc);
    __syncthreads();
  }
  store_outputs<In>(acc, p, t0, h, mw, p0, len, s_D);
}

}  // namespace ssmv::chunk_scan::gpu
