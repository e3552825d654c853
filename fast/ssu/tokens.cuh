// The multi-token SSU kernel (kernels.cu launches it for launches of more tokens than
// requests: speculative decoding's draft tokens, or any Variant::tokens launch). Device code
// for kernels.cu only.
//
// Work: a block of kWarpsPerBlock warps owns R = kRowsPerBlock·G consecutive rows of up to
// kBlockHeads heads of one group of one request (the heads share B and C); each warp G groups
// of kRowsPerWarp rows, their state in fp32 registers. The request's tokens run in windows of
// kWindowTokens: the block first stages a window's inputs in shared memory — B and C of the
// group, x and z of its rows for each head, each decoded to fp32 (exact), and every (head,
// token)'s δ and decay computed once by one thread — then the warps run the tokens from there.
// Heads one after the other: while a warp computes one head's tokens, the next head's state
// flies into its shared-memory stage (cp.async; each lane copies and reads back only its own
// chunks), so a warp's state loads overlap its arithmetic (without that, a block loaded its
// state and then computed with nothing in flight: memory time plus compute time, bench/NOTES.md,
// SSU multi-token kernel). A request longer than one window runs its heads one after the other
// with windows staged per head and no prefetch. The finishing lanes keep each token's row sums
// in shared memory; after the window's tokens the warp adds D and the gate and stores y with
// every lane taking one row (finish_window), instead of 8 of 32 lanes inside the token loop
// (4 and 8 tokens: 8–12 % faster, bench/NOTES.md).
// Per row the arithmetic is advance_group's (token_scalars, scaled_B, advance_row,
// reduce_rows, fm::output_epilogue): the same bits as the twin.
#pragma once

#include <cuda_runtime.h>

#include "fast/ssu/warp_rows.cuh"

// Groups of kRowsPerWarp rows per warp in the tokens kernel (its state in fp32 registers),
// heads per block, and the resident blocks per multiprocessor asked of the register allocator. Macros for the benchmark's variants (bench/ssu);
// defaults measured on the H200 (bench/NOTES.md, SSU multi-token kernel).
#ifndef SSMV_SSU_TOKENS_GROUPS_FP32
#define SSMV_SSU_TOKENS_GROUPS_FP32 1
#endif
#ifndef SSMV_SSU_TOKENS_GROUPS_16BIT
#define SSMV_SSU_TOKENS_GROUPS_16BIT 2
#endif
#ifndef SSMV_SSU_TOKENS_MIN_BLOCKS
#define SSMV_SSU_TOKENS_MIN_BLOCKS 5
#endif
#ifndef SSMV_SSU_TOKENS_MIN_BLOCKS_WIDE
#define SSMV_SSU_TOKENS_MIN_BLOCKS_WIDE 4
#endif

namespace ssmv::ssu::warp {

// Tokens per staged window (SSMV_SSU_TOKENS_WINDOW exists for the benchmark's variants).
#ifndef SSMV_SSU_TOKENS_WINDOW
#define SSMV_SSU_TOKENS_WINDOW 8
#endif
inline constexpr int kWindowTokens = SSMV_SSU_TOKENS_WINDOW;
#ifndef SSMV_SSU_TOKENS_HEADS
#define SSMV_SSU_TOKENS_HEADS 4
#endif
inline constexpr int kBlockHeads = SSMV_SSU_TOKENS_HEADS;

// Groups per warp for a lane layout whose group of rows holds `elements` = K·J·V state
// elements per lane: a second group of 16-bit rows only where both fit 64 registers.
__host__ __device__ constexpr int kTokenGroups(Format f, int elements) {
  return f == Format::fp32 ? SSMV_SSU_TOKENS_GROUPS_FP32 : elements <= 32 ? SSMV_SSU_TOKENS_GROUPS_16BIT : 1;
}
// Resident blocks per multiprocessor asked of the register allocator: SSMV_SSU_TOKENS_MIN_BLOCKS
// (5: 96 registers; the shared memory of N = 128 allows 5 blocks) where a lane holds at most 32
// state elements, else SSMV_SSU_TOKENS_MIN_BLOCKS_WIDE (4: 128 registers).
__host__ __device__ constexpr int kTokenMinBlocks(int state_elements) {
  return state_elements <= 32 ? SSMV_SSU_TOKENS_MIN_BLOCKS : SSMV_SSU_TOKENS_MIN_BLOCKS_WIDE;
}

// One window in shared memory: per staged head hh < kBlockHeads and token w < kWindowTokens
// its δ and decay (float2); B and C per token ([npad] fp32, npad = N rounded up to 8 so that
// every lane's chunk of V ≤ 8 elements is one aligned 16- or 32-byte read); x and z of the
// block's R rows per head and token; the rows' sums per token; the per-token state slots; then
// a landing area for 16-bit inputs' raw chunks (stage_window).
struct Window {
  int npad, R;
  float* base;
  __host__ __device__ static constexpr int padded(int N) { return (N + 7) / 8 * 8; }
  __host__ __device__ static constexpr int staged_floats(int N, int R) {
    return 2 * kWindowTokens * padded(N) + 2 * kBlockHeads * kWindowTokens * R;
  }
  __host__ __device__ static constexpr int float_count(int N, int R) {
    return 2 * kBlockHeads * kWindowTokens + staged_floats(N, R) + kWindowTokens * R;
  }
  __host__ __device__ static constexpr int bytes(int N, int R) {
    return int(sizeof(float)) * float_count(N, R) + int(sizeof(int32_t)) * kWindowTokens +
           int(sizeof(uint16_t)) * staged_floats(N, R);
  }
  __device__ __forceinline__ float2* scalars(int hh) const {
    return reinterpret_cast<float2*>(base) + hh * kWindowTokens;
  }
  __device__ __forceinline__ float* B(int w) const { return base + 2 * kBlockHeads * kWindowTokens + w * npad; }
  __device__ __forceinline__ float* C(int w) const { return B(kWindowTokens) + w * npad; }
  __device__ __forceinline__ float* x(int hh, int w) const { return C(kWindowTokens) + (hh * kWindowTokens + w) * R; }
  __device__ __forceinline__ float* z(int hh, int w) const { return x(kBlockHeads, 0) + (hh * kWindowTokens + w) * R; }
  // The rows' sums Σ C·S of each token (before D and the gate), per warp its own rows.
  __device__ __forceinline__ float* sums(int w) const { return z(kBlockHeads, 0) + w * R; }
  __device__ __forceinline__ int32_t* token_slots() const { return reinterpret_cast<int32_t*>(sums(kWindowTokens)); }
  // 16 bytes per staged chunk, item `it` at raw(it); 16-byte aligned (the floats before it
  // are a multiple of 8, the kWindowTokens ints 32 bytes).
  __device__ __forceinline__ uint4* raw(int it) const {
    return reinterpret_cast<uint4*>(token_slots() + kWindowTokens) + it;
  }
};

// The heads a staging covers: h0 .. h0 + count − 1 of one group, at window index 0 .. count − 1.
struct StagedHeads {
  int h0, count;
};

// Where staged item `it` of a window comes from and goes to: items are, per token, the
// chunks of B, of C, then for each staged head those of x and of z (if any); a chunk is `per`
// elements.
struct StagedItem {
  const void* src;  // tensor base
  int64_t index;    // first element
  float* dst;
};

__device__ __forceinline__ StagedItem staged_item(const Params& p, int g, StagedHeads heads, const Window& win,
                                                  int32_t t0, int it, int per, int nb, int nx, int rblock0) {
  const int xz = (p.z != nullptr ? 2 : 1) * nx;  // a head's chunks of one token
  const int per_token = 2 * nb + heads.count * xz;
  const int w = it / per_token;
  int r = it - w * per_token;
  const int64_t t = t0 + w;
  if (r < nb) return {p.B, t * p.B_stride_token + int64_t(g) * p.B_stride_group + r * per, win.B(w) + r * per};
  r -= nb;
  if (r < nb) return {p.C, t * p.C_stride_token + int64_t(g) * p.C_stride_group + r * per, win.C(w) + r * per};
  r -= nb;
  const int hh = r / xz;
  r -= hh * xz;
  const int64_t h = heads.h0 + hh;
  if (r < nx) return {p.x, t * p.x_stride_token + h * p.x_stride_head + rblock0 + r * per, win.x(hh, w) + r * per};
  r -= nx;
  return {p.z, t * p.z_stride_token + h * p.z_stride_head + rblock0 + r * per, win.z(hh, w) + r * per};
}

// Stages tokens [t0, t0 + nw) of `heads` into win (the caller synchronizes the block before
// and after). kChunked (chunks_aligned): every item is one aligned 16-byte cp.async, no
// registers held while it flies — fp32 inputs straight to their place, 16-bit ones to the
// landing area, then decoded by the thread that copied them. Else every item is one element
// loaded into a register, U of them issued before any is decoded and stored.
template <bool kChunked>
__device__ __forceinline__ void stage_window(const Params& p, const Head& hd, StagedHeads heads, const Window& win,
                                             int32_t t0, int nw, int rblock0) {
  const Format f = p.input_format;
  const int bytes = storage_bytes(f);
  const int per = kChunked ? 16 / bytes : 1;
  const int rows = min(win.R, p.P - rblock0);
  const int nb = p.N / per, nx = rows / per;  // kChunked: N and rows are multiples of per
  const int items = nw * (2 * nb + heads.count * (p.z != nullptr ? 2 : 1) * nx);
  const int me = threadIdx.x, step = blockDim.x;
  // Thread me < count·nw: the scalars of head me / nw, token me % nw; its dt and the per-token
  // slot go out first and are used after the chunks' loads.
  const int nw1 = max(nw, 1);  // a request of no tokens (check_indices allows it) stages nothing
  const int mh = me / nw1, mw = me % nw1, mhead = heads.h0 + mh;
  const bool scalars = me < heads.count * nw;
  const uint32_t dt = scalars ? load_raw(f, p.dt, int64_t(t0 + mw) * p.dt_stride_token + mhead) : 0;
  const float bias = scalars && hd.has_bias ? p.dt_bias[mhead] : 0.0f;
  const float A = scalars ? p.A[mhead] : 0.0f;
  const int32_t slot = me < nw && p.token_state_slots != nullptr ? p.token_state_slots[t0 + me] : p.pad_slot_id;
  if constexpr (kChunked) {
    for (int it = me; it < items; it += step) {
      const StagedItem s = staged_item(p, hd.g, heads, win, t0, it, per, nb, nx, rblock0);
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
        float4* const dst = reinterpret_cast<float4*>(staged_item(p, hd.g, heads, win, t0, it, per, nb, nx, rblock0).dst);
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
          const StagedItem s = staged_item(p, hd.g, heads, win, t0, it, per, nb, nx, rblock0);
          raw[i] = load_raw(f, s.src, s.index);
        }
      }
#pragma unroll
      for (int i = 0; i < U; ++i) {
        const int it = first + i * step;
        if (it < items) *staged_item(p, hd.g, heads, win, t0, it, per, nb, nx, rblock0).dst = decode_raw(f, raw[i]);
      }
    }
  }
  if (scalars) {
    const TokenScalars ts =
        token_scalars(decode_raw(f, dt), hd.has_bias, bias, p.dt_softplus, p.dt_limit_lo, p.dt_limit_hi, A);
    win.scalars(mh)[mw] = make_float2(ts.delta, ts.decay);
  }
  if (me < nw) win.token_slots()[me] = slot;
}

// Whether every staged item can be one aligned 16-byte load: B, C, x and z (if any) start
// on 16 bytes, their strides and N and P are multiples of a chunk (then so is every block's
// first row, a multiple of kRowsPerBlock).
inline bool chunks_aligned(const Params& p) {
  const int bytes = storage_bytes(p.input_format), per = 16 / bytes;
  return p.N % per == 0 && p.P % per == 0 && aligned_for_chunks(p.B, per, bytes, p.B_stride_token, p.B_stride_group) &&
         aligned_for_chunks(p.C, per, bytes, p.C_stride_token, p.C_stride_group) &&
         aligned_for_chunks(p.x, per, bytes, p.x_stride_token, p.x_stride_head) &&
         (p.z == nullptr || aligned_for_chunks(p.z, per, bytes, p.z_stride_token, p.z_stride_head));
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

// load_rows and store_rows for the warp's G groups of rows starting at row0.
template <Format SF, int V, int J, int L, int G>
__device__ __forceinline__ void load_groups(const Params& p, const Head& hd, const Place<L>& pl, int row0, bool vector,
                                            float (&s)[G][Place<L>::K][J * V]) {
#pragma unroll
  for (int i = 0; i < G; ++i) load_rows<SF, V, J, L>(p, hd, pl, row0 + i * kRowsPerWarp, vector, s[i]);
}

template <Format SF, int V, int J, int L, int G>
__device__ __forceinline__ void store_groups(const Params& p, int32_t slot, int h, const Place<L>& pl, int row0,
                                             bool vector, const float (&s)[G][Place<L>::K][J * V]) {
#pragma unroll
  for (int i = 0; i < G; ++i) store_rows<SF, V, J, L>(p, slot, h, row0 + i * kRowsPerWarp, pl, vector, s[i]);
}

// Token t (window slot w) of head hd (staged as head hh) for the warp's G groups starting at
// row0: δ·B and C at the lane's n (token_bc's values), every row's update and lane chain
// (advance_row), the reduction of the warp's G·K row sums into the window's sums, the
// per-token state if asked.
template <Format SF, int V, int J, int L, int G>
__device__ __forceinline__ void run_token(const Params& p, const Head& hd, int hh, const Place<L>& pl,
                                          const Window& win, int w, int row0, int rblock0, bool vector,
                                          float (&s)[G][Place<L>::K][J * V]) {
  constexpr int K = Place<L>::K, M = G * K;
  const LaneLayout lay{V, J, L};
  const float2 sc = win.scalars(hh)[w];  // δ, decay
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
  const float* const x = win.x(hh, w) - rblock0;  // x[row] for the block's rows
  float sum[M];
#pragma unroll
  for (int i = 0; i < G; ++i) {
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const int row = pl.row(row0 + i * kRowsPerWarp, k);
      sum[i * K + k] = row < p.P ? advance_row<V, J, L>(p, pl, sc.y, x[row], dB, c, s[i][k]) : 0.0f;
    }
  }
  // The finishing lanes keep the rows' sums; finish_window adds D and the gate after the
  // window's tokens, on every lane.
  const float my_sum = reduce_rows<L, M>(pl, sum);
  const int my_row = pl.template finished_row<M>(row0);
  if (pl.template finishes<M>() && my_row < p.P) win.sums(w)[my_row - rblock0] = my_sum;
  const int32_t slot = win.token_slots()[w];
  if (!hd.pad && slot != p.pad_slot_id) store_groups<SF, V, J, L, G>(p, slot, hd.h, pl, row0, vector, s);
}

// y of the window's nw tokens (from t0) for the warp's G·kRowsPerWarp rows from row0, head hd
// (staged as hh): element e = lane + 32·i is token e / rows, row row0 + e % rows — always the
// lane's row, whose D it holds — y = fm::output_epilogue of the row's sum (finish_row).
template <int G>
__device__ __forceinline__ void finish_window(const Params& p, const Head& hd, int hh, const Window& win, int32_t t0,
                                              int nw, int row0, int rblock0, int lane, float D) {
  constexpr int rows = G * kRowsPerWarp;
  static_assert(kWarp % rows == 0, "a lane keeps one row");
  __syncwarp();  // the finishing lanes' sums are visible to the warp
  const int row = row0 + lane % rows;
  for (int e = lane; e < nw * rows && row < p.P; e += kWarp) {
    const int w = e / rows, r = row - rblock0;
    const float z = p.z != nullptr ? win.z(hh, w)[r] : 0.0f;
    finish_row(p, hd, t0 + w, row, win.sums(w)[r], D, win.x(hh, w)[r], z);
  }
  __syncwarp();  // every lane has read the sums before the next token overwrites them
}

// D of the warp's row row0 + lane % (G·kRowsPerWarp), the row finish_window gives the lane.
template <int G>
__device__ __forceinline__ float window_D(const Params& p, int h, int row0, int lane) {
  const int row = row0 + lane % (G * kRowsPerWarp);
  return row < p.P ? D_of(p, h, row) : 0.0f;
}

// A warp's chunks of one item in its shared-memory stage: [G·K·J chunks][32 lanes].
template <Format SF, int V, int J, int L, int G>
using StateStage = Chunk<SF, V>[G * Place<L>::K * J][kWarp];

template <Format SF, int V, int J, int L, int G>
__host__ __device__ constexpr int state_stage_bytes() {
  return kWarpsPerBlock * int(sizeof(StateStage<SF, V, J, L, G>));
}

// Issues the cp.async of head h's state (slot hd.slot_in) for the lane's rows into its stage
// (cp.async copies 4, 8 or 16 bytes: chunks of at least 4).
template <Format SF, int V, int J, int L, int G>
__device__ __forceinline__ void prefetch_state(const Params& p, const Head& hd, int h, const Place<L>& pl, int row0,
                                               StateStage<SF, V, J, L, G>& stage, int lane) {
  using E = typename StateBits<SF>::T;
  const E* const src =
      static_cast<const E*>(p.state) + int64_t(hd.slot_in) * p.state_stride_slot + int64_t(h) * p.state_stride_head;
  if constexpr (sizeof(Chunk<SF, V>) >= 4) {  // the kernel prefetches only such chunks
    for_each_chunk<V, J, L, G>(p, pl, row0, [&](int k, int j, int64_t offset) {
      cp_async<sizeof(Chunk<SF, V>)>(&stage[k * J + j][lane], src + offset);
    });
  }
  cp_async_commit();
}

// The lane's rows from its stage (its copies complete) into fp32 registers.
template <Format SF, int V, int J, int L, int G>
__device__ __forceinline__ void unstage_state(const Params& p, const Place<L>& pl, int row0,
                                              const StateStage<SF, V, J, L, G>& stage, int lane,
                                              float (&s)[G][Place<L>::K][J * V]) {
  constexpr int K = Place<L>::K;
  cp_async_wait<0>();
  for_each_chunk<V, J, L, G>(p, pl, row0, [&](int k, int j, int64_t) {
    unpack<SF, V>(stage[k * J + j][lane], &s[k / K][k % K][j * V]);
  });
}

// Grid (R·ceil(P/(kRowsPerBlock·G)), G_groups·ceil((H/G_groups)/kBlockHeads)),
// kWarpsPerBlock·32 threads, tokens_smem_bytes of dynamic shared memory. vector: the pool is
// aligned for chunks of V (kernels.cu vector_pool); chunked: chunks_aligned(p).
template <Format SF, int V, int J, int L, int G>
__global__ void __launch_bounds__(kWarpsPerBlock* kWarp, kTokenMinBlocks(G * Place<L>::K * J * V))
    ssu_tokens_kernel(const __grid_constant__ Params p, bool vector, bool chunked) {
  static_assert(J * V <= kMaxLaneElements);
  constexpr int K = Place<L>::K, R = kRowsPerBlock * G;
  extern __shared__ __align__(16) unsigned char smem[];
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
  StateStage<SF, V, J, L, G>& stage = reinterpret_cast<StateStage<SF, V, J, L, G>*>(smem)[warp];
  const Window win{Window::padded(p.N), R, reinterpret_cast<float*>(smem + state_stage_bytes<SF, V, J, L, G>())};
  const int tiles = (p.P + R - 1) / R;
  const int rblock0 = (blockIdx.x % tiles) * R;
  const int heads_per_group = p.H / p.G, chunks = (heads_per_group + kBlockHeads - 1) / kBlockHeads;
  const int g = blockIdx.y / chunks;
  const int h0 = g * heads_per_group + (blockIdx.y % chunks) * kBlockHeads;
  const int nh = min(kBlockHeads, (g + 1) * heads_per_group - h0);
  const Place<L> pl(lane);
  const int row0 = rblock0 + warp * kRowsPerWarp * G;
  const bool has_rows = row0 < p.P;  // warp-uniform; the others stage inputs only
  Head hd = load_head(p, blockIdx.x / tiles, h0);  // the request's tokens and slots; hd.h follows the head
  float D[kBlockHeads];
#pragma unroll
  for (int hh = 0; hh < kBlockHeads; ++hh) D[hh] = has_rows && hh < nh ? window_D<G>(p, h0 + hh, row0, lane) : 0.0f;
  float s[G][K][J * V];
  auto stage_inputs = [&](StagedHeads heads, int32_t t0, int nw) {
    if (chunked) {
      stage_window<true>(p, hd, heads, win, t0, nw, rblock0);
    } else {
      stage_window<false>(p, hd, heads, win, t0, nw, rblock0);
    }
  };
  auto finish_head = [&] {  // a pad writes no state
    if (has_rows && !hd.pad) store_groups<SF, V, J, L, G>(p, hd.slot_out, hd.h, pl, row0, vector, s);
  };
  const int nw = hd.t1 - hd.t0;
  if (nw <= kWindowTokens) {
    // One window for every head: the first head's state into registers, the window staged
    // (one round trip for both), then each head's tokens with the next head's state in flight.
    const bool prefetch = has_rows && !hd.pad && vector && p.N % V == 0 && sizeof(Chunk<SF, V>) >= 4;
    hd.h = h0;
    if (has_rows) {
      load_groups<SF, V, J, L, G>(p, hd, pl, row0, vector, s);
    }
    stage_inputs({h0, nh}, hd.t0, nw);
    __syncthreads();
    for (int hh = 0; hh < nh; ++hh) {
      hd.h = h0 + hh;
      if (hh > 0 && has_rows) {
        if (prefetch) {
          unstage_state<SF, V, J, L, G>(p, pl, row0, stage, lane, s);
        } else {
          load_groups<SF, V, J, L, G>(p, hd, pl, row0, vector, s);
        }
      }
      if (prefetch && hh + 1 < nh) prefetch_state<SF, V, J, L, G>(p, hd, hd.h + 1, pl, row0, stage, lane);
      if (has_rows) {
        for (int w = 0; w < nw; ++w) run_token<SF, V, J, L, G>(p, hd, hh, pl, win, w, row0, rblock0, vector, s);
        finish_window<G>(p, hd, hh, win, hd.t0, nw, row0, rblock0, lane, D[hh]);
      }
      finish_head();
    }
    return;
  }
  // A request of several windows: head by head, each window staged for the head alone.
  for (int hh = 0; hh < nh; ++hh) {
    hd.h = h0 + hh;
    if (has_rows) {
      load_groups<SF, V, J, L, G>(p, hd, pl, row0, vector, s);
    }
    for (int32_t t0 = hd.t0; t0 < hd.t1; t0 += kWindowTokens) {
      const int n = min(kWindowTokens, hd.t1 - t0);
      if (hh > 0 || t0 != hd.t0) __syncthreads();  // every warp is done with the previous window
      stage_inputs({hd.h, 1}, t0, n);
      __syncthreads();
      if (!has_rows) continue;
      for (int w = 0; w < n; ++w) run_token<SF, V, J, L, G>(p, hd, 0, pl, win, w, row0, rblock0, vector, s);
      finish_window<G>(p, hd, 0, win, t0, n, row0, rblock0, lane, D[hh]);
    }
    finish_head();
  }
}

// The tokens kernel's dynamic shared memory: the warps' state stages, then the window.
template <Format SF, int V, int J, int L, int G>
constexpr int tokens_smem_bytes(int N) {
  return state_stage_bytes<SF, V, J, L, G>() + Window::bytes(N, kRowsPerBlock * G);
}

}  // namespace ssmv::ssu::warp
