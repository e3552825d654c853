// The octet SSU kernel (kernels.cu launches it wherever it applies, and for Variant::octet):
// a state row on an octet of lanes. Device code for kernels.cu only.
//
// Why: the other kernels give a row of N = 128 16-bit elements to 16 lanes of 8 elements
// (the layout's logical lanes, arithmetic.h lane_layout) and a lane K rows, so that dB and
// C of its 8 elements serve K rows; K·8 state elements per lane took 96–128 registers and
// 4–5 resident blocks per multiprocessor, and the multi-token kernel trailed FlashInfer's,
// whose lanes hold 16 elements of one row (bench/NOTES.md, session 23). Here 8 lanes share
// a row and a lane holds F = L/8 of the layout's logical lanes, m and m + 8, m + 16, … (m the
// lane's place in its octet): N/8 elements of one row (16 for N = 128), dB and C read from
// shared memory per row and token (32 floats per lane and token; halving them — B and C as
// bf16 bits, or two rows per octet — did not make the tokens cheaper: the token loop is bound
// by instruction issue, bench/NOTES.md, session 28).
//
// The same bits as the twin: a lane runs each logical lane's fma chain in layout order (its
// own accumulator per logical lane), then the row's butterfly levels whose partners are
// inside the lane (offsets L/2 … 8: partner of logical lane u is u ^ offset, i.e. another of
// the lane's F), then the levels 4, 2, 1 by shuffles inside the octet. Each level adds the
// same two fp32 values in the twin (addition commutes exactly), so every lane ends with the
// twin's row sum.
//
// Work: a block of 128 threads (16 octets) owns rows [rb0, rb1) of one (request, head), 16
// rows per pass, one row per octet; the next pass's raw state travels into registers while
// the current pass computes. The request's tokens run in windows of kOctetWindow: each
// window's B and C (of the head's group), x and z (of the block's rows) land in shared memory
// by cp.async, one thread per token computes δ and the decay (token_scalars), and B is stored
// as dB = δ·B (scaled_B, the twin's product), C decoded. A request of one window stages it
// once for all passes; longer ones stage each window in each pass. After the butterfly every
// lane of an octet holds the row's sum; lane m keeps token m's (a window has at most kOctet
// tokens) and, once the window's tokens are done, finishes that (token, row) pair (D, gate, y:
// finish_row): one pair a lane, no sums in shared memory, no barrier, no division.
#pragma once

#include <cuda_runtime.h>

#include "fast/ssu/tokens.cuh"

// Tokens per staged window and the resident blocks per multiprocessor asked of the register
// allocator (8: 64 registers, where a lane holds at most 16 state elements; 4 above).
// Macros for the benchmark's variants (bench/ssu).
#ifndef SSMV_SSU_OCTET_WINDOW
#define SSMV_SSU_OCTET_WINDOW 8
#endif
#ifndef SSMV_SSU_OCTET_MIN_BLOCKS
#define SSMV_SSU_OCTET_MIN_BLOCKS 8
#endif

namespace ssmv::ssu::warp {

inline constexpr int kOctet = 8;                                        // lanes per row
inline constexpr int kOctetRows = kWarpsPerBlock * kWarp / kOctet;     // rows per pass: 16
inline constexpr int kOctetWindow = SSMV_SSU_OCTET_WINDOW;
static_assert(kOctetWindow <= kOctet, "lane m of an octet finishes token m of a window");

__host__ __device__ constexpr int kOctetMinBlocks(int lane_elements) {
  return lane_elements <= 16 ? SSMV_SSU_OCTET_MIN_BLOCKS : 4;
}

// One block's shared memory for `rows` rows (a multiple of kOctetRows), N state dims and
// inputs of `ib` bytes. First what the token loop reads, at offsets that do not depend on the
// row count (N and ib are compile-time constants in the kernel, so the loop's addresses fold):
// the landing area of B and C ([window][2][N] raw, 16-byte chunks), per token δ and the decay,
// dB and C ([window][N] floats each); then x and z raw ([window][rows] each, 16-byte aligned:
// every region before is a multiple of 16 bytes) and the per-token state slots.
struct OctetWindow {
  int N, rows, ib;
  unsigned char* base;
  __host__ __device__ static int bytes(int N, int rows, int ib) {
    return kOctetWindow * (2 * N + 2 * rows) * ib + int(sizeof(float)) * (2 * kOctetWindow + 2 * kOctetWindow * N) +
           int(sizeof(int32_t)) * kOctetWindow;
  }
  __device__ __forceinline__ uint4* landing(int chunk) const { return reinterpret_cast<uint4*>(base) + chunk; }
  __device__ __forceinline__ float2* scalars() const {
    return reinterpret_cast<float2*>(base + kOctetWindow * 2 * N * ib);
  }
  __device__ __forceinline__ float* dB(int w) const { return reinterpret_cast<float*>(scalars() + kOctetWindow) + w * N; }
  __device__ __forceinline__ float* C(int w) const { return dB(kOctetWindow) + w * N; }
  __device__ __forceinline__ unsigned char* x_raw(int w) const {
    return reinterpret_cast<unsigned char*>(C(kOctetWindow)) + w * rows * ib;
  }
  __device__ __forceinline__ unsigned char* z_raw(int w) const { return x_raw(kOctetWindow) + w * rows * ib; }
  __device__ __forceinline__ int32_t* slots() const { return reinterpret_cast<int32_t*>(z_raw(kOctetWindow)); }
};

// Where element n of a token's dB or C sits in its [N] floats. Chunks of V = 8 (16-bit
// states, N = 128 or 256) are split into two planes of N/2, elements v < 4 of chunk u at
// 4u + v and the others at N/2 + 4u + v − 4, so that the 8 lanes of an octet, reading their
// chunks u = m (+ 8f), read 8 consecutive float4: 8 float4 at a 32-byte stride would meet
// each bank twice. Other V: n itself.
template <int V>
__device__ __forceinline__ int octet_position(int n, int N) {
  if constexpr (V == 8) {
    return (n % 8) / 4 * (N / 2) + n / 8 * 4 + n % 4;
  } else {
    return n;
  }
}

// The V floats of chunk n0 (a multiple of V) of a token's dB or C (octet_position).
template <int V>
__device__ __forceinline__ void read_octet_chunk(const float* base, int n0, int N, float* out) {
  if constexpr (V == 8) {
    read_floats<4>(base + n0 / 2, out);
    read_floats<4>(base + N / 2 + n0 / 2, out + 4);
  } else {
    read_floats<V>(base + n0, out);
  }
}

// Stages tokens [t0, t0 + n) for rows [rb0, rb0 + rows) of head hd into win; every thread of
// the block calls it (two barriers inside). Every item is one aligned 16-byte cp.async
// (chunks_aligned): per token N/per chunks of B, of C, then rows/per of x and of z (if any).
template <Format IF, int V, int N>
__device__ __forceinline__ void stage_octet_window(const Params& p, const Head& hd, const OctetWindow& win,
                                                   int32_t t0, int n, int rb0, int rows) {
  constexpr Format f = IF;
  constexpr int ib = storage_bytes(IF), per = 16 / ib;
  constexpr int nb = N / per;
  const int nx = rows / per, nxz = (p.z != nullptr ? 2 : 1) * nx;
  const int per_token = 2 * nb + nxz;
  const int tid = threadIdx.x, step = blockDim.x;
  // Thread tid < n: token tid's dt (its load goes out first) and per-token state slot.
  const uint32_t dt = tid < n ? load_raw(f, p.dt, int64_t(t0 + tid) * p.dt_stride_token + hd.h) : 0;
  const int32_t slot = tid < n && p.token_state_slots != nullptr ? p.token_state_slots[t0 + tid] : p.pad_slot_id;
  for (int it = tid; it < n * per_token; it += step) {
    const int w = it / per_token;
    int k = it - w * per_token;
    const int64_t t = t0 + w;
    const unsigned char* src;
    void* dst;
    if (k < 2 * nb) {
      const bool is_b = k < nb;
      const int c = is_b ? k : k - nb;
      src = static_cast<const unsigned char*>(is_b ? p.B : p.C) +
            (t * (is_b ? p.B_stride_token : p.C_stride_token) + int64_t(hd.g) * (is_b ? p.B_stride_group : p.C_stride_group) +
             c * per) * ib;
      dst = win.landing(w * 2 * nb + k);
    } else {
      k -= 2 * nb;
      const bool is_x = k < nx;
      const int c = is_x ? k : k - nx;
      src = static_cast<const unsigned char*>(is_x ? p.x : p.z) +
            (t * (is_x ? p.x_stride_token : p.z_stride_token) + int64_t(hd.h) * (is_x ? p.x_stride_head : p.z_stride_head) +
             rb0 + c * per) * ib;
      dst = (is_x ? win.x_raw(w) : win.z_raw(w)) + c * 16;
    }
    cp_async<16>(dst, src);
  }
  cp_async_commit();
  if (tid < n) {
    const TokenScalars ts = token_scalars(decode_raw(f, dt), hd.has_bias, hd.dt_bias, p.dt_softplus, p.dt_limit_lo,
                                          p.dt_limit_hi, hd.A);
    win.scalars()[tid] = make_float2(ts.delta, ts.decay);
    win.slots()[tid] = slot;
  }
  cp_async_wait<0>();
  __syncthreads();
  // B as dB = δ·B (the twin's scaled_B), C decoded: chunk `it` of token w.
  for (int it = tid; it < n * 2 * nb; it += step) {
    const int w = it / (2 * nb), k = it - w * 2 * nb;
    const bool is_b = k < nb;
    const uint4 q = *win.landing(it);
    const uint32_t word[4] = {q.x, q.y, q.z, q.w};
    const float delta = win.scalars()[w].x;
    float* const dst = is_b ? win.dB(w) : win.C(w);
    const int n0 = (is_b ? k : k - nb) * per;
    if constexpr (ib == 2) {
#pragma unroll
      for (int e = 0; e < 8; ++e) {
        const float v = decode16(f, uint16_t(word[e / 2] >> (16 * (e % 2))));
        dst[octet_position<V>(n0 + e, N)] = is_b ? scaled_B(delta, v) : v;
      }
    } else {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const float v = __uint_as_float(word[e]);
        dst[octet_position<V>(n0 + e, N)] = is_b ? scaled_B(delta, v) : v;
      }
    }
  }
  __syncthreads();
}

// Grid (R·splits, H), 128 threads, OctetWindow::bytes(N, rows_per_block, input bytes) of
// dynamic shared memory; block (r·splits + s, h) owns rows [s·rows_per_block, …) ∩ [0, P).
// Requires (launcher: why_not_octet) J·L·V = N, L a multiple of 8, the pool aligned for
// chunks of V, chunks_aligned(p).
template <Format SF, Format IF, int V, int J, int L>
__global__ void __launch_bounds__(kWarpsPerBlock* kWarp, kOctetMinBlocks(L / kOctet * J * V))
    ssu_octet_kernel(const __grid_constant__ Params p, int rows_per_block) {
  constexpr int F = L / kOctet, CH = F * J, EL = CH * V;  // logical lanes, chunks, elements per lane
  constexpr int N = J * L * V;                            // p.N (why_not_octet)
  static_assert(L % kOctet == 0 && F >= 1 && (F & (F - 1)) == 0);
  using E = typename StateBits<SF>::T;
  extern __shared__ __align__(16) unsigned char smem[];
  const OctetWindow win{N, rows_per_block, storage_bytes(IF), smem};
  const int splits = (p.P + rows_per_block - 1) / rows_per_block;
  const int rb0 = (blockIdx.x % splits) * rows_per_block;
  const int rb1 = min(p.P, rb0 + rows_per_block);
  const int member = threadIdx.x % kOctet, octet = threadIdx.x / kOctet;
  const LaneLayout lay{V, J, L};
  Head hd = load_head(p, blockIdx.x / splits, blockIdx.y);
  // Chunk c = f·J + j of the lane: logical lane member + 8f, chunk j, at n0(c).
  auto n0 = [&](int c) { return lane_element(lay, member + kOctet * (c / J), c % J, 0); };
  E* const head_pool = static_cast<E*>(p.state) + int64_t(hd.h) * p.state_stride_head;
  const E* const src = head_pool + int64_t(hd.slot_in) * p.state_stride_slot;
  auto load_raw_row = [&](int row, Chunk<SF, V> (&raw)[CH]) {
#pragma unroll
    for (int c = 0; c < CH; ++c) {
      raw[c] = Chunk<SF, V>{};
      if (!hd.pad && row < rb1) raw[c] = *reinterpret_cast<const Chunk<SF, V>*>(src + int64_t(row) * p.state_stride_p + n0(c));
    }
  };
  auto store_row = [&](int32_t slot, int row, const float (&s)[EL]) {
    E* const dst = head_pool + int64_t(slot) * p.state_stride_slot + int64_t(row) * p.state_stride_p;
#pragma unroll
    for (int c = 0; c < CH; ++c) *reinterpret_cast<Chunk<SF, V>*>(dst + n0(c)) = pack<SF, V>(&s[c * V]);
  };
  const int nw = hd.t1 - hd.t0;
  const bool one_window = nw <= kOctetWindow;
  const int rows = rb1 - rb0;
  const int passes = (rows + kOctetRows - 1) / kOctetRows;

  Chunk<SF, V> raw[CH];
  load_raw_row(rb0 + octet, raw);
  if (one_window) stage_octet_window<IF, V, N>(p, hd, win, hd.t0, nw, rb0, rows);
  for (int pass = 0; pass < passes; ++pass) {
    const int row = rb0 + pass * kOctetRows + octet;
    const bool live = row < rb1;
    float s[EL];
#pragma unroll
    for (int c = 0; c < CH; ++c) unpack<SF, V>(raw[c], &s[c * V]);
    if (pass + 1 < passes) load_raw_row(row + kOctetRows, raw);  // flies while this pass computes
    for (int32_t t0 = hd.t0; t0 < hd.t1; t0 += kOctetWindow) {
      const int n = min(kOctetWindow, hd.t1 - t0);
      if (!one_window) {
        __syncthreads();  // every thread is done with the previous window
        stage_octet_window<IF, V, N>(p, hd, win, t0, n, rb0, rows);
      }
      float my_sum = 0.0f;  // the row's sum of token `member` of the window: the lane finishes it
      // Not unrolled: unrolled over the window (64 bytes of spills at 64 registers) it ran
      // 3–9 % slower at batch 256 (bench/NOTES.md, session 27).
#pragma unroll 1
      for (int w = 0; w < kOctetWindow; ++w) {
        if (w >= n) break;
        const float2 sc = win.scalars()[w];  // δ, decay
        const float x = live ? decode_raw(IF, load_raw(IF, win.x_raw(w), row - rb0)) : 0.0f;
        float part[F];
#pragma unroll
        for (int f = 0; f < F; ++f) {
          part[f] = 0.0f;
#pragma unroll
          for (int j = 0; j < J; ++j) {
            const int c = f * J + j;
            float db[V], cc[V];
            read_octet_chunk<V>(win.dB(w), n0(c), N, db);
            read_octet_chunk<V>(win.C(w), n0(c), N, cc);
#pragma unroll
            for (int v = 0; v < V; ++v) {
              s[c * V + v] = update_state(s[c * V + v], sc.y, db[v], x);
              part[f] = accumulate(part[f], cc[v], s[c * V + v]);
            }
          }
        }
        // Butterfly levels L/2 … 8 inside the lane, then 4, 2, 1 inside the octet.
        float sum = fold_logical_lanes<F>(part);
#pragma unroll
        for (int o = kOctet / 2; o >= 1; o /= 2) sum = sum + __shfl_xor_sync(0xffffffffu, sum, o);
        if (member == w) my_sum = sum;
        const int32_t slot = win.slots()[w];
        if (!hd.pad && live && slot != p.pad_slot_id) store_row(slot, row, s);
      }
      if (live && member < n) {
        // x (and D) read again rather than kept beside my_sum through the token loop: kept,
        // they spilled 32 bytes at the 64-register cap (ptxas, session 29).
        const float x = decode_raw(IF, load_raw(IF, win.x_raw(member), row - rb0));
        const float z = p.z != nullptr ? decode_raw(IF, load_raw(IF, win.z_raw(member), row - rb0)) : 0.0f;
        finish_row(p, hd, t0 + member, row, my_sum, D_of(p, hd.h, row), x, z);
      }
    }
    if (!hd.pad && live) store_row(hd.slot_out, row, s);  // a pad writes no state
  }
}

}  // namespace ssmv::ssu::warp
