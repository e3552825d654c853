// Tensor-core building blocks for bf16/fp16 operands (Op = In) and stage (d) on them: the
// same arithmetic as kernels.cuh's generic kernels (and the twin), with whole operand
// tiles staged in shared memory by 16-byte loads and fragments read by ldmatrix. Stages
// (b) and (e) on tensor cores are in kernels_async.cuh. Only the data movement differs
// from kernels.cuh: the same values enter the same mma.sync steps in the same order.
#pragma once

#include "fast/chunk_scan/kernels.cuh"

namespace ssmv::chunk_scan::gpu {

inline constexpr int kRow64 = 72;  // row stride (elements) of [rows][64] tiles: 144 bytes

// Row stride of a [rows][NS] tile with NS = N rounded up to 16: NS + 8 elements, so
// fragment loads (4-byte words, rows 8 apart) fall in distinct banks.
__host__ __device__ inline int padded_stride(int N) { return ((N + 15) & ~15) + 8; }

// ldmatrix .x4 .trans: four 8×8 b16 matrices; lane l gives the row address of matrix
// l/8, row l%8, and receives from matrix i the elements (rows 2(l%4), 2(l%4)+1; column l/4).
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], const void* smem_row) {
  const uint32_t addr = static_cast<uint32_t>(__cvta_generic_to_shared(smem_row));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

// 8 consecutive elements from src as raw 16-bit patterns (the first `valid` exist; the
// rest read as +0): one 16-byte load when all 8 exist and src is 16-byte aligned.
template <class T>
__device__ __forceinline__ uint4 load8_raw(const T* src, int valid) {
  static_assert(sizeof(T) == 2, "16-bit operands only");
  if (valid >= 8 && (reinterpret_cast<uintptr_t>(src) & 15) == 0) {
    return *reinterpret_cast<const uint4*>(src);
  }
  uint16_t e[8];
#pragma unroll
  for (int j = 0; j < 8; ++j) e[j] = j < valid ? reinterpret_cast<const uint16_t*>(src)[j] : uint16_t(0);
  uint4 raw;
  raw.x = e[0] | uint32_t(e[1]) << 16;
  raw.y = e[2] | uint32_t(e[3]) << 16;
  raw.z = e[4] | uint32_t(e[5]) << 16;
  raw.w = e[6] | uint32_t(e[7]) << 16;
  return raw;
}

// The 8 values of raw (element j in bits 16(j%2).. of word j/2) widened to fp32 (exact).
// raw by value and the halves taken by shifts: through a pointer into raw, the compiler
// turned a 16-byte shared load into eight 2-byte loads.
template <class T>
__device__ __forceinline__ void unpack8(const uint4 raw, float (&v)[8]) {
  const uint32_t w[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    const uint16_t bits = uint16_t(w[j / 2] >> (16 * (j % 2)));
    if constexpr (std::is_same_v<T, __nv_bfloat16>) v[j] = to_f(__ushort_as_bfloat16(bits));
    else v[j] = to_f(__ushort_as_half(bits));
  }
}

template <class Op>
__device__ __forceinline__ void store8(Op* dst, const float (&v)[8]) {
  uint4 raw;
  Op* e = reinterpret_cast<Op*>(&raw);
#pragma unroll
  for (int j = 0; j < 8; ++j) e[j] = to_op<Op>(v[j]);
  *reinterpret_cast<uint4*>(dst) = raw;
}

// Loads issued per thread before their first use (memory-level parallelism).
inline constexpr int kBatch = 8;

// dst[r][0..NS) = src row r (N valid elements, zero beyond) for r < rows_valid, zero rows
// for rows_valid ≤ r < 64; NS = N rounded up to 16; dst row stride padded_stride(N).
// Values are copied bit for bit (src holds Op values).
template <class Op>
__device__ __forceinline__ void stage_rows64(Op* dst, const Op* src, int64_t row_stride, int rows_valid,
                                             int N) {
  const int NS = (N + 15) & ~15, CS = padded_stride(N), vecs = NS / 8, total = kTile * vecs;
  for (int base = threadIdx.x; base < total; base += kThreads * kBatch) {
    uint4 raw[kBatch];
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      const int i = base + b * kThreads, r = i / vecs, v = (i % vecs) * 8;
      raw[b] = i < total && r < rows_valid ? load8_raw(src + r * row_stride + v, N - v) : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      const int i = base + b * kThreads, r = i / vecs, v = (i % vecs) * 8;
      if (i < total) *reinterpret_cast<uint4*>(dst + r * CS + v) = raw[b];
    }
  }
}

// B fragments of 8 n8 tiles from a [k][64] tile (n contiguous, stride kRow64) at k-step s.
template <class Op>
__device__ __forceinline__ void mma_b_trans(const uint32_t (&a)[4], const Op* sB, int s, float (&acc)[8][4]) {
  const int lane = threadIdx.x & 31, i = lane >> 3, r = lane & 7;
#pragma unroll
  for (int f = 0; f < 8; f += 2) {
    uint32_t b[4];
    ldmatrix_x4_trans(b, sB + (16 * s + r + 8 * (i & 1)) * kRow64 + 8 * f + 8 * (i >> 1));
    mma16816<Op>(acc[f], a[0], a[1], a[2], a[3], b[0], b[1]);
    mma16816<Op>(acc[f + 1], a[0], a[1], a[2], a[3], b[2], b[3]);
  }
}

// ldmatrix .x4 (no transpose): lane l gives the row address of matrix l/8, row l%8, and
// receives from matrix i the elements (row l/4; columns 2(l%4), 2(l%4)+1).
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], const void* smem_row) {
  const uint32_t addr = static_cast<uint32_t>(__cvta_generic_to_shared(smem_row));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

// Two fp32 values rounded to nearest even into Op and packed, lo in the low half (the
// element with the lower k of an A-fragment register).
template <class Op> __device__ __forceinline__ uint32_t pack2_rn(float lo, float hi);
template <> __device__ __forceinline__ uint32_t pack2_rn<__nv_bfloat16>(float lo, float hi) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const uint32_t*>(&v);
}
template <> __device__ __forceinline__ uint32_t pack2_rn<__half>(float lo, float hi) {
  const __half2 v = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<const uint32_t*>(&v);
}

// a & mask by an instruction the compiler cannot see through: zeroing masked weights must
// not become a branch around their computation (a branch per weight serialises the
// independent exp chains).
__device__ __forceinline__ uint32_t and_b32(uint32_t a, uint32_t mask) {
  uint32_t r;
  asm("and.b32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(mask));
  return r;
}

// Warp tile over k-steps [0, steps) with A = sA[16 rows][k], B = sB[64 cols][k] (k
// contiguous, row stride `stride` elements, a multiple of 8, rows 16-byte aligned),
// fragments by ldmatrix.
template <class Op>
__device__ __forceinline__ void mma_rows_cols(const Op* sA, const Op* sB, int stride, int steps,
                                                  float (&acc)[8][4]) {
  const int lane = threadIdx.x & 31, i = lane >> 3, r = lane & 7;
  for (int s = 0; s < steps; ++s) {
    uint32_t a[4];  // matrices: rows 0-7 / 8-15 at k 0-7, then at k 8-15
    ldmatrix_x4(a, sA + (r + 8 * (i & 1)) * stride + 16 * s + 8 * (i >> 1));
#pragma unroll
    for (int f = 0; f < 8; f += 2) {
      uint32_t b[4];  // matrices: columns 8f.. at k 0-7, k 8-15, then columns 8f+8..
      ldmatrix_x4(b, sB + (8 * f + r + 8 * (i >> 1)) * stride + 16 * s + 8 * (i & 1));
      mma16816<Op>(acc[f], a[0], a[1], a[2], a[3], b[0], b[1]);
      mma16816<Op>(acc[f + 1], a[0], a[1], a[2], a[3], b[2], b[3]);
    }
  }
}

// (d) grid ((L/64)², G, NC); dynamic shared memory rows64_smem(N).
__host__ __device__ inline int rows64_smem(int N) { return 2 * kTile * padded_stride(N) * 2; }

template <class Op>
__global__ void __launch_bounds__(kThreads) cb_mma_kernel(const Params p) {
  extern __shared__ __align__(16) unsigned char smem[];
  const int CS = padded_stride(p.N);
  Op* sA = reinterpret_cast<Op*>(smem);  // [64][CS]: C_m
  Op* sB = sA + kTile * CS;              // [64][CS]: B_k
  const int c = blockIdx.z, g = blockIdx.y, warp = threadIdx.x >> 5;
  const int tiles = p.L / kTile, mt = blockIdx.x / tiles, kt = blockIdx.x % tiles;
  const int t0 = p.chunk_start[c], len = p.chunk_len[c];
  const int m0 = mt * kTile, k0 = kt * kTile;
  allow_next_stage();
  if (kt > mt || m0 >= len) {
    wait_prior_stages();
    return;
  }
  const Op* C = static_cast<const Op*>(p.C) + int64_t(t0) * p.c_st + int64_t(g) * p.c_sg;
  const Op* B = static_cast<const Op*>(p.B) + int64_t(t0) * p.b_st + int64_t(g) * p.b_sg;
  stage_rows64(sA, C + int64_t(m0) * p.c_st, p.c_st, len - m0, p.N);
  stage_rows64(sB, B + int64_t(k0) * p.b_st, p.b_st, len - k0, p.N);
  __syncthreads();
  float acc[8][4] = {};
  mma_rows_cols<Op>(sA + warp * 16 * CS, sB, CS, (p.N + 15) / 16, acc);
  wait_prior_stages();  // C and B are inputs: the tile is computed while stage (c) may still run
  float* out = p.cb + (int64_t(c) * p.G + g) * p.L * p.L;
  const int L = p.L;
  for_each_acc(acc, m0 + warp * 16, k0, len, len,
               [&](int row, int col, float v) { out[int64_t(row) * L + col] = v; });
}

}  // namespace ssmv::chunk_scan::gpu
