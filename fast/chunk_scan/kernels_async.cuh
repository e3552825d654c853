// Stages (b) and (e) on tensor cores with asynchronous copies (cp.async, sm_80+): every
// operand tile of a phase is in flight at once and the next 64-token slab of stage (e)
// loads while the current one computes. Same arithmetic, order and operand values as
// kernels.cuh / kernels_mma.cuh (and the twin): only the data movement differs.
#pragma once

#include "fast/chunk_scan/kernels_mma.cuh"

namespace ssmv::chunk_scan::gpu {

__device__ __forceinline__ void cp_async16(void* smem, const void* gmem) {
  const uint32_t s = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int Pending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending));
}

// dst[0..8) = src[0..valid) and zeros: an asynchronous 16-byte copy when all 8 elements
// exist and src is 16-byte aligned, else plain loads and one 16-byte shared store.
template <class T>
__device__ __forceinline__ void copy8_async(T* dst, const T* src, int valid) {
  static_assert(sizeof(T) == 2, "16-bit operands only");
  if (valid >= 8 && (reinterpret_cast<uintptr_t>(src) & 15) == 0) {
    cp_async16(dst, src);
  } else {
    *reinterpret_cast<uint4*>(dst) = valid > 0 ? load8_raw(src, valid) : make_uint4(0, 0, 0, 0);
  }
}

// 4 floats, same rule (16-byte copy when all exist and src is aligned).
__device__ __forceinline__ void copy4f_async(float* dst, const float* src, int valid) {
  if (valid >= 4 && (reinterpret_cast<uintptr_t>(src) & 15) == 0) {
    cp_async16(dst, src);
  } else {
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (valid > 0) v.x = src[0];
    if (valid > 1) v.y = src[1];
    if (valid > 2) v.z = src[2];
    *reinterpret_cast<float4*>(dst) = v;
  }
}

// rows [0, 64) of a [64][padded_stride(N)] tile from src rows (row_stride apart, N valid
// columns, rows_valid valid rows); zero elsewhere up to N rounded to 16.
template <class Op>
__device__ __forceinline__ void issue_rows64(Op* dst, const Op* src, int64_t row_stride, int rows_valid, int N) {
  const int NS = (N + 15) & ~15, CS = padded_stride(N), vecs = NS / 8;
  for (int i = threadIdx.x; i < kTile * vecs; i += kThreads) {
    const int r = i / vecs, v = (i % vecs) * 8;
    copy8_async(dst + r * CS + v, src + r * row_stride + v, r < rows_valid ? N - v : 0);
  }
}

// (b) grid (⌈P/64⌉·⌈N/64⌉, H, NC); dynamic shared memory chunk_state_mma_smem(L).
template <class Op>
__global__ void __launch_bounds__(kThreads) chunk_state_async_kernel(const ChunkScanParams p) {
  extern __shared__ __align__(16) unsigned char smem[];
  const int L = p.L;
  Op* sX = reinterpret_cast<Op*>(smem);                        // [L][72]: x_k[p0 + j]
  Op* sB = sX + L * kRow64;                                    // [L][72]: B_k[n0 + j], then R(B·scale_k)
  float* s_scale = reinterpret_cast<float*>(sB + L * kRow64);  // [L]
  const int c = blockIdx.z, h = blockIdx.y, warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int n_tiles = (p.N + kTile - 1) / kTile;
  const int p0 = (blockIdx.x / n_tiles) * kTile, n0 = (blockIdx.x % n_tiles) * kTile;
  const int g = h / (p.H / p.G);
  const int t0 = p.chunk_start[c], len = p.chunk_len[c], len16 = (len + 15) & ~15;
  const Op* x = static_cast<const Op*>(p.x) + int64_t(t0) * p.x_st + int64_t(h) * p.x_sh + p0;
  const Op* B = static_cast<const Op*>(p.B) + int64_t(t0) * p.b_st + int64_t(g) * p.b_sg + n0;
  // All of the chunk's x and B rows in flight at once (rows ≥ len are zero).
  for (int i = threadIdx.x; i < len16 * 8; i += kThreads) {
    const int k = i >> 3, v = (i & 7) * 8;
    copy8_async(sX + k * kRow64 + v, x + k * p.x_st + v, k < len ? p.P - p0 - v : 0);
    copy8_async(sB + k * kRow64 + v, B + k * p.b_st + v, k < len ? p.N - n0 - v : 0);
  }
  cp_async_commit();
  const int64_t hT = int64_t(h) * p.T;
  const float cs_last = p.cumsum[hT + t0 + len - 1];
  for (int j = threadIdx.x; j < len; j += kThreads) {
    s_scale[j] = state_scale(cs_last, p.cumsum[hT + t0 + j], p.delta[hT + t0 + j]);
  }
  cp_async_wait<0>();
  __syncthreads();
  // Each thread scales and rounds the B vectors it copied: R(B_k[n]·scale_k).
  for (int i = threadIdx.x; i < len * 8; i += kThreads) {
    const int k = i >> 3, v = (i & 7) * 8;
    float bv[8];
    unpack8<Op>(*reinterpret_cast<const uint4*>(sB + k * kRow64 + v), bv);
    const float scale = s_scale[k];
#pragma unroll
    for (int j = 0; j < 8; ++j) bv[j] = bv[j] * scale;
    store8(sB + k * kRow64 + v, bv);
  }
  __syncthreads();
  float acc[8][4] = {};
  const int i = lane >> 3, r = lane & 7;
  for (int s = 0; s < len16 / 16; ++s) {
    uint32_t a[4];  // A = xᵀ: rows p (16·warp + ...), k contiguous in the [k][p] tile
    ldmatrix_x4_trans(a, sX + (16 * s + r + 8 * (i >> 1)) * kRow64 + 16 * warp + 8 * (i & 1));
    mma_b_trans<Op>(a, sB, s, acc);
  }
  float* out = p.chunk_state + (int64_t(c) * p.H + h) * p.P * p.N;
  const int N = p.N;
  for_each_acc(acc, p0 + warp * 16, n0, p.P, p.N,
               [&](int row, int col, float v) { out[int64_t(row) * N + col] = v; });
}

// Stage (e) shared memory: region A holds the inter tiles C [64][CS] and h_in [64][CS],
// later slab buffer 1; region B holds slab buffer 0 and the weights. A slab buffer is the
// raw C·Bᵀ rows [64][68] fp32 and the x rows [64 k][72].
inline constexpr int kCbRow = 68;  // fp32 row stride of a C·Bᵀ slab: 272 bytes
__host__ __device__ inline int scan_slab_bytes() { return kTile * kCbRow * 4 + kTile * kRow64 * 2; }
__host__ __device__ inline int scan_region_a_bytes(int N) {
  const int inter = rows64_smem(N), slab = scan_slab_bytes();
  return inter > slab ? inter : slab;
}
__host__ __device__ inline int scan_async_smem(int N) {
  return scan_region_a_bytes(N) + scan_slab_bytes() + kTile * kRow64 * 2;
}

// (e) grid (⌈L/64⌉·⌈P/64⌉, H, NC); dynamic shared memory scan_async_smem(N).
template <class Op>
__global__ void __launch_bounds__(kThreads) scan_async_kernel(const ChunkScanParams p) {
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ float s_cs[256], s_delta[256], s_decay[kTile], s_D[kTile];
  const int CS = padded_stride(p.N);
  unsigned char* region_a = smem;
  unsigned char* region_b = smem + scan_region_a_bytes(p.N);
  Op* sC = reinterpret_cast<Op*>(region_a);  // inter: [64][CS] C_m
  Op* sS = sC + kTile * CS;                  // inter: [64][CS] R(h_in)[p]
  float* slab_cb[2] = {reinterpret_cast<float*>(region_b), reinterpret_cast<float*>(region_a)};
  Op* slab_x[2] = {reinterpret_cast<Op*>(region_b + kTile * kCbRow * 4),
                   reinterpret_cast<Op*>(region_a + kTile * kCbRow * 4)};
  Op* sW = reinterpret_cast<Op*>(region_b + scan_slab_bytes());  // [64 m][72] R(w_mk)
  const int c = blockIdx.z, h = blockIdx.y, warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int gl = lane >> 2;
  const int p_tiles = (p.P + kTile - 1) / kTile;
  const int m0 = (blockIdx.x / p_tiles) * kTile, p0 = (blockIdx.x % p_tiles) * kTile;
  const int t0 = p.chunk_start[c], len = p.chunk_len[c];
  if (m0 >= len) return;
  const int g = h / (p.H / p.G);
  const int L = p.L;
  const Op* x = static_cast<const Op*>(p.x) + int64_t(t0) * p.x_st + int64_t(h) * p.x_sh + p0;
  const float* cb = p.cb + (int64_t(c) * p.G + g) * L * L;
  // Slab k0: C·Bᵀ rows m0..m0+63, columns k0..k0+63 (rows < len), and x rows k0..k0+63.
  auto issue_slab = [&](int k0, int buf) {
    for (int i = threadIdx.x; i < kTile * 16; i += kThreads) {
      const int row = i >> 4, v = (i & 15) * 4, m = m0 + row;
      // Only entries k ≤ m are used; columns past m + 1 are not copied.
      copy4f_async(slab_cb[buf] + row * kCbRow + v, cb + int64_t(m) * L + k0 + v,
                   m < len ? min(m + 1 - k0 - v, 4) : 0);
    }
    for (int i = threadIdx.x; i < kTile * 8; i += kThreads) {
      const int kk = i >> 3, v = (i & 7) * 8;
      copy8_async(slab_x[buf] + kk * kRow64 + v, x + int64_t(k0 + kk) * p.x_st + v,
                  k0 + kk < len ? p.P - p0 - v : 0);
    }
  };

  // Inter tiles (group 0), then slab 0 (group 1), all in flight together.
  const Op* C = static_cast<const Op*>(p.C) + int64_t(t0 + m0) * p.c_st + int64_t(g) * p.c_sg;
  const Op* state_in = static_cast<const Op*>(p.state_in) + (int64_t(c) * p.H + h) * p.P * p.N;
  issue_rows64(sC, C, p.c_st, len - m0, p.N);
  issue_rows64(sS, state_in + int64_t(p0) * p.N, p.N, p.P - p0, p.N);
  cp_async_commit();
  issue_slab(0, 0);
  cp_async_commit();
  load_chunk_scalars(p, int64_t(h) * p.T + t0, len, m0, h, p0, s_cs, s_delta, s_decay, s_D);
  cp_async_wait<1>();
  __syncthreads();

  // Inter-chunk term (twin: chain(C_m, h_in[p], N)), then ×exp(cs_m) per row.
  float acc[8][4] = {};
  mma_rows_cols<Op>(sC + warp * 16 * CS, sS, CS, 0, (p.N + 15) / 16, acc);
  scale_rows(acc, s_decay + warp * 16);

  // Intra-chunk term in 64-token slabs; warp rows [mw, mw+16) take k-steps J with 16J ≤ mw
  // (twin: chain(w_m, x, m+1, acc) = steps 0..⌊m/16⌋). Slab j+1 loads during slab j.
  const int mw = m0 + warp * 16;
  const int k_end = min(m0 + kTile, len);
  int buf = 0;
  for (int k0 = 0; k0 < k_end; k0 += kTile, buf ^= 1) {
    cp_async_wait<0>();
    __syncthreads();  // slab k0 landed; every warp is done with the other buffer and sW
    if (k0 + kTile < k_end) {
      issue_slab(k0 + kTile, buf ^ 1);
      cp_async_commit();
    }
    const float* scb = slab_cb[buf];
    for (int i = threadIdx.x; i < kTile * 16; i += kThreads) {
      const int row = i >> 4, v = (i & 15) * 4, m = m0 + row, k = k0 + v;
      Op packed[4];
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        // Entries above the diagonal (k > m) and rows past the chunk are 0.
        const float w = m < len && k + j <= m
                            ? cb_weight(scb[row * kCbRow + v + j], s_cs[m], s_cs[k + j], s_delta[k + j])
                            : 0.0f;
        packed[j] = to_op<Op>(w);
      }
      *reinterpret_cast<uint2*>(sW + row * kRow64 + v) = *reinterpret_cast<const uint2*>(packed);
    }
    __syncthreads();
    const Op* sX = slab_x[buf];
    for (int s = 0; s < kTile / 16; ++s) {
      if (k0 + 16 * s > mw) break;
      const int k = 16 * s + 2 * (lane & 3);
      const Op* sA = sW + warp * 16 * kRow64;
      const uint32_t a[4] = {word_at(sA, gl * kRow64 + k), word_at(sA, (gl + 8) * kRow64 + k),
                             word_at(sA, gl * kRow64 + k + 8), word_at(sA, (gl + 8) * kRow64 + k + 8)};
      mma_b_trans<Op>(a, sX, s, acc);
    }
  }
  store_outputs<Op>(acc, p, t0, h, mw, p0, len, s_D);
}

}  // namespace ssmv::chunk_scan::gpu
