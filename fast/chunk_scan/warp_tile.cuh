// A warp's share of a block's 64×64 output tile: 16 rows × 64 columns (8 n8 fragments),
// accumulated over a k-slab of up to 32 held in shared memory, k contiguous:
//   sA[row][k] (the warp's 16 rows), sB[col][k] (64 columns), row stride kStride<Op>.
// Accumulator layout (mma.sync m16n8k16 C/D fragment; g = lane/4, q = lane%4):
//   acc[f][0] (row g,   col 8f+2q)   acc[f][1] (row g,   col 8f+2q+1)
//   acc[f][2] (row g+8, col 8f+2q)   acc[f][3] (row g+8, col 8f+2q+1)
// Op = __nv_bfloat16 / __half: mma.sync 16-wide steps (the docs/design.md §4 model in
// mma_model.h reproduces them). Op = float: sequential fmaf per element, in increasing k,
// up to a per-row limit (the twin's fma_chain).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cstdint>

namespace ssmv::chunk_scan::gpu {

inline constexpr int kTile = 64;   // block tile rows and columns
inline constexpr int kSlab = 32;   // k per shared-memory slab
inline constexpr int kThreads = 128;  // 4 warps × 16 rows

// Row strides (elements): 16-bit operands 40 = 20 words, so the 8 fragment rows × 4
// word-columns of a fragment load hit 32 distinct banks; fp32 operands 33 words.
template <class Op> struct SlabLayout { static constexpr int stride = 40; };
template <> struct SlabLayout<float> { static constexpr int stride = 33; };

__device__ __forceinline__ uint32_t word_at(const void* base, int half_index) {
  return *reinterpret_cast<const uint32_t*>(static_cast<const uint16_t*>(base) + half_index);
}

template <class Op>
__device__ __forceinline__ void mma16816(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2,
                                         uint32_t a3, uint32_t b0, uint32_t b1);

template <>
__device__ __forceinline__ void mma16816<__nv_bfloat16>(float (&d)[4], uint32_t a0, uint32_t a1,
                                                        uint32_t a2, uint32_t a3, uint32_t b0,
                                                        uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

template <>
__device__ __forceinline__ void mma16816<__half>(float (&d)[4], uint32_t a0, uint32_t a1,
                                                 uint32_t a2, uint32_t a3, uint32_t b0,
                                                 uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// Tensor-core slab: steps s = first_step .. end_step-1 of the slab (k = 16s .. 16s+15).
template <class Op>
__device__ __forceinline__ void warp_tile_mma(const Op* sA, const Op* sB, int first_step,
                                              int end_step, float (&acc)[8][4]) {
  constexpr int KS = SlabLayout<Op>::stride;
  const int lane = threadIdx.x & 31, g = lane >> 2, q = lane & 3;
  for (int s = first_step; s < end_step; ++s) {
    const int k = 16 * s + 2 * q;
    const uint32_t a0 = word_at(sA, g * KS + k);
    const uint32_t a1 = word_at(sA, (g + 8) * KS + k);
    const uint32_t a2 = word_at(sA, g * KS + k + 8);
    const uint32_t a3 = word_at(sA, (g + 8) * KS + k + 8);
#pragma unroll
    for (int f = 0; f < 8; ++f) {
      const int col = 8 * f + g;
      mma16816<Op>(acc[f], a0, a1, a2, a3, word_at(sB, col * KS + k), word_at(sB, col * KS + k + 8));
    }
  }
}

// SIMT slab: acc = fmaf(A[row][k], B[col][k], acc) for k < limit of the row (row g uses
// limit_lo, row g+8 limit_hi), in increasing k.
__device__ __forceinline__ void warp_tile_fma(const float* sA, const float* sB, int limit_lo,
                                              int limit_hi, float (&acc)[8][4]) {
  constexpr int KS = SlabLayout<float>::stride;
  const int lane = threadIdx.x & 31, g = lane >> 2, q = lane & 3;
#pragma unroll
  for (int f = 0; f < 8; ++f) {
    const float* b0 = sB + (8 * f + 2 * q) * KS;
    const float* b1 = b0 + KS;
    for (int k = 0; k < limit_lo; ++k) {
      const float a = sA[g * KS + k];
      acc[f][0] = __fmaf_rn(a, b0[k], acc[f][0]);
      acc[f][1] = __fmaf_rn(a, b1[k], acc[f][1]);
    }
    for (int k = 0; k < limit_hi; ++k) {
      const float a = sA[(g + 8) * KS + k];
      acc[f][2] = __fmaf_rn(a, b0[k], acc[f][2]);
      acc[f][3] = __fmaf_rn(a, b1[k], acc[f][3]);
    }
  }
}

}  // namespace ssmv::chunk_scan::gpu
