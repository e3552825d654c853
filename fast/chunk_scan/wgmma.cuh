// Hopper's warpgroup MMA, wgmma.mma_async.sync.aligned.m64nNk16.f32.{bf16,f16}, for the
// probe that measured it (tests/wgmma_probe.cu; no chunk_scan kernel uses wgmma: the stage
// (e) on it was slower than mma.sync and left the tree, bench/NOTES.md session 18): the
// instruction wrappers, the shared-memory matrix descriptors and the fences. Device code for
// the architecture-specific target sm_90a only (wgmma exists nowhere else): include it only
// from translation units compiled for 90a.
//
// Arithmetic (docs/design.md §4.1, measured on the H200 2026-12-02 over 11.6 M outputs):
// each k16 instruction is one mma_step of mma_model.h (16 products and the accumulator
// aligned to one exponent, one rounding toward zero), so K/16 instructions chained in
// increasing k on one fp32 accumulator are mma_chain, as m16n8k16 mma.sync steps are.
//
// Register layouts (thread t of the warpgroup: warp w = t/32, g = (t%32)/4, q = t%4):
//   accumulator element i of m64nN (i < N/2): row 16w + g + 8·((i/2)%2),
//     column 8·(i/4) + 2q + i%2 — per warp, mma.m16n8k16's C fragments of N/8 n8 tiles;
//   A from registers (rs), step of k16: a[0] (row 16w + g, k 2q, 2q+1), a[1] (row + 8, same
//     k), a[2] (row, k + 8), a[3] (row + 8, k + 8) — mma.m16n8k16's A fragment.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace ssmv::chunk_scan::gpu {

// wgmma.mma_async m64nNk16, f32 accumulator d (N/2 registers a thread), no negation
// (imm-scale 1). ss: A and B from matrix descriptors, A K-major; rs: A from registers. B
// from a descriptor, K-major (kTransB = 0) or MN-major (kTransB = 1: B stored with n
// contiguous, imm-trans-b). scale_d = 0 computes d = a·bᵀ without reading d.
template <class Op, int N> struct Wgmma;

// One specialization per (type, N): the accumulator's N/2 registers are operands %0 ..
// %(N/2 − 1); ss takes the descriptors, scale-d and imm-trans-b after them, rs the four A
// registers, B's descriptor, scale-d and imm-trans-b (operand numbers in SS_OPS / SS_P /
// SS_T and RS_OPS / RS_P / RS_T).
#define SSMV_ACC4(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3])
#define SSMV_ACC_8 SSMV_ACC4(0)
#define SSMV_ACC_64 \
  SSMV_ACC4(0), SSMV_ACC4(4), SSMV_ACC4(8), SSMV_ACC4(12), SSMV_ACC4(16), SSMV_ACC4(20), SSMV_ACC4(24), SSMV_ACC4(28)
#define SSMV_D_8 "{%0, %1, %2, %3}"
#define SSMV_D_64                                                                                   \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, " \
  "%21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}"
#define SSMV_WGMMA(OP, TYPE, N, SS_OPS, SS_P, SS_T, RS_OPS, RS_P, RS_T)                                   \
  template <> struct Wgmma<OP, N> {                                                                     \
    template <int kTransB = 0>                                                                          \
    static __device__ __forceinline__ void ss(float (&d)[N / 2], uint64_t da, uint64_t db, int scale_d) { \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " SS_P ", 0;\n"                                    \
                   "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." TYPE "." TYPE " " SSMV_D_##N        \
                   ", " SS_OPS ", p, 1, 1, 0, " SS_T ";\n}\n"                                           \
                   : SSMV_ACC_##N                                                                       \
                   : "l"(da), "l"(db), "r"(scale_d), "n"(kTransB));                                     \
    }                                                                                                   \
    template <int kTransB = 0>                                                                          \
    static __device__ __forceinline__ void rs(float (&d)[N / 2], const uint32_t (&a)[4], uint64_t db,   \
                                              int scale_d) {                                            \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " RS_P ", 0;\n"                                    \
                   "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." TYPE "." TYPE " " SSMV_D_##N        \
                   ", " RS_OPS ", p, 1, 1, " RS_T ";\n}\n"                                              \
                   : SSMV_ACC_##N                                                                       \
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(scale_d), "n"(kTransB));  \
    }                                                                                                   \
  };

SSMV_WGMMA(__nv_bfloat16, "bf16", 8, "%4, %5", "%6", "%7", "{%4, %5, %6, %7}, %8", "%9", "%10")
SSMV_WGMMA(__nv_bfloat16, "bf16", 64, "%32, %33", "%34", "%35", "{%32, %33, %34, %35}, %36", "%37", "%38")
SSMV_WGMMA(__half, "f16", 8, "%4, %5", "%6", "%7", "{%4, %5, %6, %7}, %8", "%9", "%10")
SSMV_WGMMA(__half, "f16", 64, "%32, %33", "%34", "%35", "{%32, %33, %34, %35}, %36", "%37", "%38")
#undef SSMV_WGMMA
#undef SSMV_D_64
#undef SSMV_D_8
#undef SSMV_ACC_64
#undef SSMV_ACC_8
#undef SSMV_ACC4

// The matrix descriptor of one k16 step of an operand in shared memory without swizzle
// (PTX ISA, wgmma matrix descriptor): bits 0–13 the start address, 16–29 the leading-
// dimension byte offset, 32–45 the stride-dimension byte offset, each in units of 16
// bytes; base offset 0; bits 62–63 swizzle mode 0 (none). The operand is made of core
// matrices of 8 × 16 bytes (128 contiguous bytes, 8 elements a row):
//   K-major (A, or B without transpose): a core matrix is 8 rows (m or n) × 8 k; the
//     leading offset is the distance of core matrices adjacent in k, the stride offset
//     that of core matrices adjacent in m or n;
//   MN-major (B with imm-trans-b = 1): a core matrix is 8 k × 8 n (n contiguous); the
//     leading offset is the distance of core matrices adjacent in k, the stride offset
//     that of core matrices adjacent in n (CUTLASS's canonical no-swizzle MN-major layout
//     ((8,n),(8,k)) : ((1,SBO),(8,LBO)) in elements).
__device__ __forceinline__ uint64_t wgmma_descriptor(const void* start, uint32_t leading_bytes,
                                                     uint32_t stride_bytes) {
  const uint32_t address = static_cast<uint32_t>(__cvta_generic_to_shared(start));
  return uint64_t((address >> 4) & 0x3fffu) | (uint64_t((leading_bytes >> 4) & 0x3fffu) << 16) |
         (uint64_t((stride_bytes >> 4) & 0x3fffu) << 32);
}

// Before the first wgmma of a warpgroup and between any other access of its accumulator or
// A registers and a wgmma that uses them (PTX ISA: wgmma.fence).
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
// The wgmma issued since the last commit form one group.
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
// Waits until at most `Pending` of this warpgroup's groups are in flight; only then may the
// accumulator and A registers of the completed ones be read or written.
template <int Pending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(Pending) : "memory");
}
// Shared-memory writes of the generic proxy (stores, cp.async) made visible to wgmma's
// async proxy; each writing thread runs it before the barrier that precedes the wgmma.
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// Keeps the compiler from moving accesses of registers a wgmma reads or writes across the
// asynchronous instruction (they are in flight between the wgmma and its wait_group): the
// values count as read and rewritten here.
template <int L>
__device__ __forceinline__ void fence_registers(float (&v)[L]) {
#pragma unroll
  for (int i = 0; i < L; ++i) asm volatile("" : "+f"(v[i])::"memory");
}
template <int L>
__device__ __forceinline__ void fence_registers(uint32_t (&v)[L]) {
#pragma unroll
  for (int i = 0; i < L; ++i) asm volatile("" : "+r"(v[i])::"memory");
}

}  // namespace ssmv::chunk_scan::gpu
