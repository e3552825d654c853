#include "fast/chunk_scan/tests/wgmma_probe.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "fast/common/cuda_check.h"

namespace ssmv::chunk_scan::testing {
namespace {

// wgmma.mma_async m64nNk16, f32 accumulator, A from a descriptor (ss) or from registers
// (rs), B from a descriptor; no negation (imm-scale 1), no transpose (both K-major). The
// predicate p is scale-d: p false computes d = a·bᵀ without reading d.
template <class Op, int N> struct Wgmma;

// One specialization per (type, N): the accumulator's N/2 registers are operands %0 ..
// %(N/2 − 1); ss takes the descriptors and scale-d after them, rs the four A registers,
// B's descriptor and scale-d (operand numbers in SS_OPS / SS_P and RS_OPS / RS_P).
#define SSMV_ACC4(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3])
#define SSMV_ACC_8 SSMV_ACC4(0)
#define SSMV_ACC_64 \
  SSMV_ACC4(0), SSMV_ACC4(4), SSMV_ACC4(8), SSMV_ACC4(12), SSMV_ACC4(16), SSMV_ACC4(20), SSMV_ACC4(24), SSMV_ACC4(28)
#define SSMV_D_8 "{%0, %1, %2, %3}"
#define SSMV_D_64                                                                                   \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, " \
  "%21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}"
#define SSMV_WGMMA(OP, TYPE, N, SS_OPS, SS_P, RS_OPS, RS_P)                                               \
  template <> struct Wgmma<OP, N> {                                                                     \
    static __device__ __forceinline__ void ss(float (&d)[N / 2], uint64_t da, uint64_t db, int scale_d) { \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " SS_P ", 0;\n"                                    \
                   "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." TYPE "." TYPE " " SSMV_D_##N        \
                   ", " SS_OPS ", p, 1, 1, 0, 0;\n}\n"                                                  \
                   : SSMV_ACC_##N                                                                       \
                   : "l"(da), "l"(db), "r"(scale_d));                                                   \
    }                                                                                                   \
    static __device__ __forceinline__ void rs(float (&d)[N / 2], const uint32_t (&a)[4], uint64_t db,   \
                                              int scale_d) {                                            \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " RS_P ", 0;\n"                                    \
                   "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." TYPE "." TYPE " " SSMV_D_##N        \
                   ", " RS_OPS ", p, 1, 1, 0;\n}\n"                                                     \
                   : SSMV_ACC_##N                                                                       \
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(scale_d));                \
    }                                                                                                   \
  };

SSMV_WGMMA(__nv_bfloat16, "bf16", 8, "%4, %5", "%6", "{%4, %5, %6, %7}, %8", "%9")
SSMV_WGMMA(__nv_bfloat16, "bf16", 64, "%32, %33", "%34", "{%32, %33, %34, %35}, %36", "%37")
SSMV_WGMMA(__half, "f16", 8, "%4, %5", "%6", "{%4, %5, %6, %7}, %8", "%9")
SSMV_WGMMA(__half, "f16", 64, "%32, %33", "%34", "{%32, %33, %34, %35}, %36", "%37")
#undef SSMV_WGMMA
#undef SSMV_D_64
#undef SSMV_D_8
#undef SSMV_ACC_64
#undef SSMV_ACC_8
#undef SSMV_ACC4

// Element (r, k) of an R×K operand in shared memory, K-major without swizzle: core matrix
// (r/8, k/8) of 8 rows × 8 elements (16 bytes a row, 128 bytes in all) at
// ((r/8)·K/8 + k/8)·64 elements. So the two core matrices of a k16 step lie 128 bytes
// apart (the leading-dimension byte offset) and consecutive 8-row groups K·16 bytes apart
// (the stride-dimension byte offset); step s starts 256·s bytes in.
template <int K>
__device__ __forceinline__ int core_offset(int r, int k) {
  return ((r / 8) * (K / 8) + k / 8) * 64 + (r % 8) * 8 + k % 8;
}

// The matrix descriptor of a k16 step of such an operand at `start` (PTX ISA, wgmma matrix
// descriptor): bits 0–13 start address, 16–29 leading-dimension byte offset, 32–45
// stride-dimension byte offset, each in units of 16 bytes; base offset 0; bits 62–63
// swizzle mode 0 (none).
template <int K>
__device__ __forceinline__ uint64_t descriptor(const void* start) {
  const uint32_t address = static_cast<uint32_t>(__cvta_generic_to_shared(start));
  constexpr uint64_t leading = 128 >> 4, stride = (K * 16) >> 4;
  return uint64_t((address >> 4) & 0x3fffu) | (leading << 16) | (stride << 32);
}

// Keeps the compiler from moving accesses of the accumulator registers across the
// asynchronous wgmma (they are in flight between the instructions and wait_group).
template <int L>
__device__ __forceinline__ void fence_registers(float (&v)[L]) {
#pragma unroll
  for (int i = 0; i < L; ++i) asm volatile("" : "+f"(v[i])::"memory");
}

template <class Op>
__device__ __forceinline__ uint32_t pack(const Op* v, int i) {
  return *reinterpret_cast<const uint32_t*>(v + i);
}

// One warpgroup per tile. Thread t: warp w = t/32, g = (t%32)/4, q = t%4. Accumulator
// element i of m64nN (i < N/2): row 16w + g + 8·((i/2)%2), column 8·(i/4) + 2q + i%2.
// A fragment of step s (m64k16, as mma.m16n8k16's A for the warp's 16 rows): rows
// 16w + g (+8), columns 16s + 2q (+1) and +8.
template <class Op, int N, int K, bool kARegisters>
__global__ void __launch_bounds__(128) wgmma_tiles_kernel(const Op* a, const Op* b, const float* c, float* d,
                                                          int scale_d) {
  __shared__ alignas(128) Op sA[64 * K];
  __shared__ alignas(128) Op sB[N * K];
  const int tile = blockIdx.x, t = threadIdx.x;
  const Op* A = a + size_t(tile) * 64 * K;
  const Op* B = b + size_t(tile) * N * K;
  for (int i = t; i < 64 * K; i += 128) sA[core_offset<K>(i / K, i % K)] = A[i];
  for (int i = t; i < N * K; i += 128) sB[core_offset<K>(i / K, i % K)] = B[i];
  // Shared-memory writes of the generic proxy, made visible to wgmma's async proxy.
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();

  const int w = t >> 5, g = (t & 31) >> 2, q = t & 3, row = 16 * w + g;
  const float* C = c + size_t(tile) * 64 * N;
  float acc[N / 2];
#pragma unroll
  for (int i = 0; i < N / 2; ++i) acc[i] = C[(row + 8 * ((i >> 1) & 1)) * N + 8 * (i >> 2) + 2 * q + (i & 1)];
  uint32_t frag[K / 16][4];
  if constexpr (kARegisters) {
#pragma unroll
    for (int s = 0; s < K / 16; ++s) {
      const int k = 16 * s + 2 * q;
      frag[s][0] = pack(A, row * K + k);
      frag[s][1] = pack(A, (row + 8) * K + k);
      frag[s][2] = pack(A, row * K + k + 8);
      frag[s][3] = pack(A, (row + 8) * K + k + 8);
    }
  }
  fence_registers(acc);
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
  for (int s = 0; s < K / 16; ++s) {
    const uint64_t db = descriptor<K>(sB + 128 * s);
    const int sd = s == 0 ? scale_d : 1;
    if constexpr (kARegisters) {
      Wgmma<Op, N>::rs(acc, frag[s], db, sd);
    } else {
      Wgmma<Op, N>::ss(acc, descriptor<K>(sA + 128 * s), db, sd);
    }
  }
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  fence_registers(acc);
  float* D = d + size_t(tile) * 64 * N;
#pragma unroll
  for (int i = 0; i < N / 2; ++i) D[(row + 8 * ((i >> 1) & 1)) * N + 8 * (i >> 2) + 2 * q + (i & 1)] = acc[i];
}

template <class Op, int N, int K>
void launch(bool a_in_registers, int tiles, const Op* a, const Op* b, const float* c, float* d, int scale_d) {
  if (a_in_registers) {
    wgmma_tiles_kernel<Op, N, K, true><<<tiles, 128>>>(a, b, c, d, scale_d);
  } else {
    wgmma_tiles_kernel<Op, N, K, false><<<tiles, 128>>>(a, b, c, d, scale_d);
  }
}

template <class Op, int N>
void launch(WgmmaShape s, int tiles, const Op* a, const Op* b, const float* c, float* d) {
  switch (s.k) {
    case 16: return launch<Op, N, 16>(s.a_in_registers, tiles, a, b, c, d, s.scale_d);
    case 32: return launch<Op, N, 32>(s.a_in_registers, tiles, a, b, c, d, s.scale_d);
    case 64: return launch<Op, N, 64>(s.a_in_registers, tiles, a, b, c, d, s.scale_d);
  }
  throw std::invalid_argument("run_wgmma_tiles: K must be 16, 32 or 64, not " + std::to_string(s.k));
}

// A device copy of a host vector, freed at scope exit.
template <class T>
struct Device {
  T* ptr = nullptr;
  explicit Device(const std::vector<T>& v) {
    SSMV_CUDA_CHECK(cudaMalloc(&ptr, v.size() * sizeof(T)));
    SSMV_CUDA_CHECK(cudaMemcpy(ptr, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
  ~Device() { cudaFree(ptr); }
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;
};

template <class Op>
std::vector<float> run(WgmmaShape s, const std::vector<float>& a, const std::vector<float>& b,
                       const std::vector<float>& c, int tiles) {
  if (a.size() != size_t(tiles) * 64 * s.k || b.size() != size_t(tiles) * s.n * s.k ||
      c.size() != size_t(tiles) * 64 * s.n) {
    throw std::invalid_argument("run_wgmma_tiles: operand sizes do not match the tiles");
  }
  std::vector<Op> ha(a.begin(), a.end()), hb(b.begin(), b.end());  // exact: the values are Op values
  Device<Op> da(ha), db(hb);
  Device<float> dc(c), dd(c);
  if (s.n == 8) {
    launch<Op, 8>(s, tiles, da.ptr, db.ptr, dc.ptr, dd.ptr);
  } else if (s.n == 64) {
    launch<Op, 64>(s, tiles, da.ptr, db.ptr, dc.ptr, dd.ptr);
  } else {
    throw std::invalid_argument("run_wgmma_tiles: N must be 8 or 64, not " + std::to_string(s.n));
  }
  SSMV_CUDA_CHECK(cudaGetLastError());
  std::vector<float> d(c.size());
  SSMV_CUDA_CHECK(cudaMemcpy(d.data(), dd.ptr, d.size() * 4, cudaMemcpyDeviceToHost));
  return d;
}

}  // namespace

std::vector<float> run_wgmma_tiles(bool bf16, WgmmaShape shape, const std::vector<float>& a,
                                   const std::vector<float>& b, const std::vector<float>& c, int tiles) {
  return bf16 ? run<__nv_bfloat16>(shape, a, b, c, tiles) : run<__half>(shape, a, b, c, tiles);
}

}  // namespace ssmv::chunk_scan::testing
