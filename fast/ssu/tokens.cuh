// The multi-token SSU kernel (kernels.cu launches it for launches of more tokens than
// requests: speculative decoding's draft tokens, or any Variant::tokens launch). Device code
// for kernels.cu only.
//
// Work: a block of kWarpsPerBlock warps owns R = kRowsPerBlock·G consecutive rows of one
// (request, head); each warp G groups of kRowsPerWarp rows, their state in fp32 registers
// for the whole request. The request's tokens run in windows of kWindowTokens: the block
// first stages a window's inputs in shared memory — B and C of the head's group, x and z of
// the block's rows, each decoded to fp32 (exact), and every token's δ and decay computed
// once by one thread — then the warps run the window's tokens from there. So a token costs
// no memory round trip (a window one, and the first window's travels with the state's
// loads), and the per-token work a warp repeats is only the rows' arithmetic: the scalars,
// the loads and conversions of the inputs are done once per block instead of once per warp
// (the general path, advance_group, pays a round trip and all of that per token and warp:
// 27 % of the copy bandwidth at 8 tokens; bench/NOTES.md, SSU multi-token rows).
// Per row the arithmetic is advance_group's (token_scalars, scaled_B, advance_row,
// reduce_rows, fm::output_epilogue): the same bits as the twin.
#pragma once

#include <cuda_runtime.h>

#include "fast/ssu/warp_rows.cuh"

// Groups of kRowsPerWarp rows per warp in the tokens kernel (its state in fp32 registers)
// and the resident blocks per multiprocessor asked of the register allocator where a lane
// holds more than 32 state elements. Macros for the benchmark's variants (bench/ssu);
// defaults measured on the H200 (bench/NOTES.md, SSU multi-token kernel).
#ifndef SSMV_SSU_TOKENS_GROUPS_FP32
#define SSMV_SSU_TOKENS_GROUPS_FP32 1
#endif
#ifndef SSMV_SSU_TOKENS_GROUPS_16BIT
#define SSMV_SSU_TOKENS_GROUPS_16BIT 2
#endif
#ifndef SSMV_SSU_TOKENS_MIN_BLOCKS_WIDE
#define SSMV_SSU_TOKENS_MIN_BLOCKS_WIDE 4
#endif

namespace ssmv::ssu::warp {

inline constexpr int kWindowTokens = 8;

// Groups per warp for a lane layout whose group of rows holds `elements` = K·J·V state
// elements per lane: a second group of 16-bit rows only where both fit 64 registers.
__host__ __device__ constexpr int kTokenGroups(Format f, int elements) {
  return f == Format::fp32 ? SSMV_SSU_TOKENS_GROUPS_FP32 : elements <= 32 ? SSMV_SSU_TOKENS_GROUPS_16BIT : 1;
}
// Resident blocks per multiprocessor asked of the register allocator: 6 (80 registers) where
// a lane holds at most 32 state elements, else SSMV_SSU_TOKENS_MIN_BLOCKS_WIDE (128).
__host__ __device__ constexpr int kTokenMinBlocks(int state_elements) {
  return state_elements <= 32 ? SSMV_SSU_MIN_BLOCKS : SSMV_SSU_TOKENS_MIN_BLOCKS_WIDE;
}

// One window in shared memory: per token w < kWindowTokens its δ and decay (float2), its
// per-token state slot, B and C ([npad] fp32, npad = N rounded up to 8 so that every lane's
// chunk of V ≤ 8 elements is one aligned 16- or 32-byte read), x and z of the block's R
// rows (fp32); then a landing area for 16-bit inputs' raw chunks (stage_window).
struct Window {
  int npad, R;
  float* base;
  __host__ __device__ static constexpr int padded(int N) { return (N + 7) / 8 * 8; }
  __host__ __device__ static constexpr int float_count(int N, int R) {
    return 2 * kWindowTokens + 2 * kWindowTokens * padded(N) + 2 * kWindowTokens * R;
  }
  __host__ __device__ static constexpr int bytes(int N, int R) {
    return int(sizeof(float)) * float_count(N, R) + int(sizeof(int32_t)) * kWindowTokens +
           int(sizeof(uint16_t)) * (float_count(N, R) - 2 * kWindowTokens);
  }
  __device__ __forceinline__ float2* scalars() const { return reinterpret_cast<float2*>(base); }
  __device__ __forceinline__ float* B(int w) const { return base + 2 * kWindowTokens + w * npad; }
  __device__ __forceinline__ float* C(int w) const { return B(kWindowTokens) + w * npad; }
  __device__ __forceinline__ float* x(int w) const { return C(kWindowTokens) + w * R; }
  __device__ __forceinline__ float* z(int w) const { return x(kWindowTokens) + w * R; }
  __device__ __forceinline__ int32_t* token_slots() const { return reinterpret_cast<int32_t*>(z(kWindowTokens)); }
  // 16 bytes per staged chunk, item `it` at raw(it); 16-byte aligned (float_count is a
  // multiple of 4 and kWindowTokens ints are 32 bytes).
  __device__ __forceinline__ uint4* raw(int it) const {
    return reinterpret_cast<uint4*>(token_slots() + kWindowTokens) + it;
  }
};

// Where staged item `it` of a window comes from and goes to: items are, per token, the
// chunks of B, of C, of x and of z (if any) in that order; a chunk is `per` elements.
struct StagedItem {
  const void* src;  // tensor base
  int64_t index;    // first element
  float* dst;
};

__device__ __forceinline__ StagedItem staged_item(const Params& p, const Head& hd, const Window& win, int32_t t0,
                                                  int it, int per, int nb, int nx, int rblock0) {
  const int per_token = 2 * nb + (p.z != nullptr ? 2 : 1) * nx;
  const int w = it / per_token;
  int r = it - w * per_token;
  const int64_t t = t0 + w;
  if (r < nb) return {p.B, t * p.B_stride_token + int64_t(hd.g) * p.B_stride_group + r * per, win.B(w) + r * per};
  r -= nb;
  if (r < nb) return {p.C, t * p.C_stride_token + int64_t(hd.g) * p.C_stride_group + r * per, win.C(w) + r * per};
  r -= nb;
  if (r < nx) {
    return {p.x, t * p.x_stride_token + int64_t(hd.h) * p.x_stride_head + rblock0 + r * per, win.x(w) + r * per};
  }
  r -= nx;
  return {p.z, t * p.z_stride_token + int64_t(hd.h) * p.z_stride_head + rblock0 + r * per, win.z(w) + r * per};
}

// Stages tokens [t0, t0 + nw) into win (the caller synchronizes the block before and
// after). kChunked (chunks_aligned): every item is one aligned 16-byte cp.async, no
// registers held while it flies — fp32 inputs straight to their place, 16-bit ones to the
// landing area, then decoded by the thread that copied them. Else every item is one element
// loaded into a register, U of them issued before any is decoded and stored.
template <bool kChunked>
__device__ __forceinline__ void stage_window(const Params& p, const Head& hd, const Window& win, int32_t t0, int nw,
                                             int rblock0) {
  const Format f = p.input_format;
  const int bytes = f == Format::fp32 ? 4 : 2;
  const int per = kChunked ? 16 / bytes : 1;
  const int rows = min(win.R, p.P - rblock0);
  const int nb = p.N / per, nx = rows / per;  // kChunked: N and rows are multiples of per
  const int items = nw * (2 * nb + (p.z != nullptr ? 2 : 1) * nx);
  const int me = threadIdx.x, step = blockDim.x;
  // Token me's dt and per-token slot go out first; its scalars are computed after the loads.
  const uint32_t dt = me < nw ? load_raw(f, p.dt, int64_t(t0 + me) * p.dt_stride_token + hd.h) : 0;
  const int32_t slot = me < nw && p.token_state_slots != nullptr ? p.token_state_slots[t0 + me] : p.pad_slot_id;
  if constexpr (kChunked) {
    for (int it = me; it < items; it += step) {
      const StagedItem s = staged_item(p, hd, win, t0, it, per, nb, nx, rblock0);
      const void* src = static_cast<const char*>(s.src) + s.index * bytes;
      cp_async<16>(bytes == 4 ? static_cast<void*>(s.dst) : static_cast<void*>(win.raw(it)), src);
    }
    cp_async_commit();
    cp_async_wait<0>();
    if (bytes == 2) {
      for (int it = me; it < items; it += step) {
        const uint4 q = *win.raw(it);
        const uint32_t word[4] = {q.x, q.y, q.z, q.w};
        float v[8];
#pragma unroll
        for (int e = 0; e < 8; ++e) v[e] = decode16(f, uint16_t(word[e / 2] >> (16 * (e % 2))));
        float4* const dst = reinterpret_cast<float4*>(staged_item(p, hd, win, t0, it, per, nb, nx, rblock0).dst);
        dst[0] = make_float4(v[0], v[1], v[2], v[3]);
        dst[1] = make_float4(v[4], v[5], v[6], v[7]);
      }
    }
  } else {
    constexpr int U = 4;
    for (int first = me; first < items; first += U * step) {
      uint32_t raw[U];
#pragma unroll
      for (int i = 0; i < U; ++i) {
        const int it = first + i * step;
        if (it < items) {
          const StagedItem s = staged_item(p, hd, win, t0, it, per, nb, nx, rblock0);
          raw[i] = load_raw(f, s.src, s.index);
        }
      }
#pragma unroll
      for (int i = 0; i < U; ++i) {
        const int it = first + i * step;
        if (it < items) *staged_item(p, hd, win, t0, it, per, nb, nx, rblock0).dst = decode_raw(f, raw[i]);
      }
    }
  }
  if (me < nw) {
    const TokenScalars ts =
        token_scalars(decode_raw(f, dt), hd.has_bias, hd.dt_bias, p.dt_softplus, p.dt_limit_lo, p.dt_limit_hi, hd.A);
    win.scalars()[me] = make_float2(ts.delta, ts.decay);
    win.token_slots()[me] = slot;
  }
}

// Whether every staged item can be one aligned 16-byte load: B, C, x and z (if any) start
// on 16 bytes, their strides and N and P are multiples of a chunk (then so is every block's
// first row, a multiple of kRowsPerBlock).
inline bool chunks_aligned(const Params& p) {
  const int bytes = p.input_format == Format::fp32 ? 4 : 2, per = 16 / bytes;
  auto aligned = [&](const void* base, int64_t s1, int64_t s2) {
    return reinterpret_cast<uintptr_t>(base) % 16 == 0 && s1 % per == 0 && s2 % per == 0;
  };
  return p.N % per == 0 && p.P % per == 0 && aligned(p.B, p.B_stride_token, p.B_stride_group) &&
         aligned(p.C, p.C_stride_token, p.C_stride_group) && aligned(p.x, p.x_stride_token, p.x_stride_head) &&
         (p.z == nullptr || aligned(p.z, p.z_stride_token, p.z_stride_head));
}

// V consecutive floats of shared memory at an address aligned to min(V, 4) floats.
template <int V>
__device__ __forceinline__ void read_floats(const float* src, float* dst) {
  if constexpr (V % 4 == 0) {
#pragma unroll
    for (int i = 0; i < V / 4; ++i) {
      const float4 q = reinterpret_cast<const float4*>(src)[i];
      dst[4 * i] = q.x, dst[4 * i + 1] = q.y, dst[4 * i + 2] = q.z, dst[4 * i + 3] = q.w;
    }
  } else if constexpr (V == 2) {
    const float2 q = *reinterpret_cast<const float2*>(src);
    dst[0] = q.x, dst[1] = q.y;
  } else {
    dst[0] = src[0];
  }
}

// Token t (window slot w) for the warp's G groups starting at row0: δ·B and C at the lane's
// n (token_bc's values), every row's update and lane chain (advance_row), the reduction of
// the warp's G·K row sums, y from the finishing lanes, the per-token state if asked.
template <Format SF, int V, int J, int L, int G>
__device__ __forceinline__ void run_token(const Params& p, const Head& hd, const Place<L>& pl, const Window& win,
                                          int w, int32_t t, int row0, int rblock0, bool vector, float D,
                                          float (&s)[G][Place<L>::K][J * V]) {
  constexpr int K = Place<L>::K, M = G * K;
  const LaneLayout lay{V, J, L};
  const float2 sc = win.scalars()[w];  // δ, decay
  float dB[J * V], c[J * V];
#pragma unroll
  for (int j = 0; j < J; ++j) {
    const int n0 = lane_element(lay, pl.u, j, 0);
    float b[V], cc[V];
    if (n0 + V <= p.N) {
      read_floats<V>(win.B(w) + n0, b);
      read_floats<V>(win.C(w) + n0, cc);
    } else {
#pragma unroll
      for (int v = 0; v < V; ++v) {
        b[v] = n0 + v < p.N ? win.B(w)[n0 + v] : 0.0f;
        cc[v] = n0 + v < p.N ? win.C(w)[n0 + v] : 0.0f;
      }
    }
#pragma unroll
    for (int v = 0; v < V; ++v) {
      const bool live = n0 + v < p.N;
      dB[j * V + v] = live ? scaled_B(sc.x, b[v]) : 0.0f;
      c[j * V + v] = live ? cc[v] : 0.0f;
    }
  }
  float sum[M];
#pragma unroll
  for (int i = 0; i < G; ++i) {
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const int row = pl.row(row0 + i * kRowsPerWarp, k);
      sum[i * K + k] =
          row < p.P ? advance_row<V, J, L>(p, pl, sc.y, win.x(w)[row - rblock0], dB, c, s[i][k]) : 0.0f;
    }
  }
  const float my_sum = reduce_rows<L, M>(pl, sum);
  const int my_row = pl.template finished_row<M>(row0);
  if (pl.template finishes<M>() && my_row < p.P) {
    const float z = p.z != nullptr ? win.z(w)[my_row - rblock0] : 0.0f;
    finish_row(p, hd, t, my_row, my_sum, D, win.x(w)[my_row - rblock0], z);
  }
  const int32_t slot = win.token_slots()[w];
  if (!hd.pad && slot != p.pad_slot_id) {
#pragma unroll
    for (int i = 0; i < G; ++i) store_rows<SF, V, J, L>(p, slot, hd.h, row0 + i * kRowsPerWarp, pl, vector, s[i]);
  }
}

// Grid (R·ceil(P/(kRowsPerBlock·G)), H), kWarpsPerBlock·32 threads, Window::bytes(N,
// kRowsPerBlock·G) of dynamic shared memory. vector: the pool is aligned for chunks of V
// (kernels.cu vector_pool); chunked: chunks_aligned(p).
template <Format SF, int V, int J, int L, int G>
__global__ void __launch_bounds__(kWarpsPerBlock* kWarp, kTokenMinBlocks(G * Place<L>::K * J * V))
    ssu_tokens_kernel(const __grid_constant__ Params p, bool vector, bool chunked) {
  static_assert(J * V <= kMaxLaneElements);
  constexpr int K = Place<L>::K, R = kRowsPerBlock * G;
  extern __shared__ __align__(16) unsigned char smem[];
  const Window win{Window::padded(p.N), R, reinterpret_cast<float*>(smem)};
  const int tiles = (p.P + R - 1) / R;
  const int rblock0 = (blockIdx.x % tiles) * R;
  const int warp = threadIdx.x / kWarp;
  const Place<L> pl(threadIdx.x % kWarp);
  const int row0 = rblock0 + warp * kRowsPerWarp * G;
  const bool has_rows = row0 < p.P;  // warp-uniform; the others stage inputs only
  const Head hd = load_head(p, blockIdx.x / tiles, blockIdx.y);
  const float D = has_rows ? load_D<L, G * K>(p, hd, pl, row0) : 0.0f;
  float s[G][K][J * V];
  if (has_rows) {
#pragma unroll
    for (int i = 0; i < G; ++i) load_rows<SF, V, J, L>(p, hd, pl, row0 + i * kRowsPerWarp, vector, s[i]);
  }
  for (int32_t t0 = hd.t0; t0 < hd.t1; t0 += kWindowTokens) {
    const int nw = min(kWindowTokens, hd.t1 - t0);
    if (t0 != hd.t0) __syncthreads();  // every warp is done with the previous window
    if (chunked) {
      stage_window<true>(p, hd, win, t0, nw, rblock0);
    } else {
      stage_window<false>(p, hd, win, t0, nw, rblock0);
    }
    __syncthreads();
    if (!has_rows) continue;
    for (int w = 0; w < nw; ++w) run_token<SF, V, J, L, G>(p, hd, pl, win, w, t0 + w, row0, rblock0, vector, D, s);
  }
  if (has_rows && !hd.pad) {  // a pad writes no state
#pragma unroll
    for (int i = 0; i < G; ++i) store_rows<SF, V, J, L>(p, hd.slot_out, hd.h, row0 + i * kRowsPerWarp, pl, vector, s[i]);
  }
}

}  // namespace ssmv::ssu::warp
