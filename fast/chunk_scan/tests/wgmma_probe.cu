#include "fast/chunk_scan/tests/wgmma_probe.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "fast/chunk_scan/wgmma.cuh"
#include "fast/common/cuda_check.h"

namespace ssmv::chunk_scan::testing {
namespace {

using gpu::Wgmma;

// Element (r, k) of an R×K operand in shared memory, K-major without swizzle: core matrix
// (r/8, k/8) of 8 rows × 8 elements (16 bytes a row, 128 bytes in all) at
// ((r/8)·K/8 + k/8)·64 elements. So the two core matrices of a k16 step lie 128 bytes
// apart (the leading-dimension byte offset) and consecutive 8-row groups K·16 bytes apart
// (the stride-dimension byte offset); step s starts 256·s bytes in.
template <int K>
__device__ __forceinline__ int core_offset(int r, int k) {
  return ((r / 8) * (K / 8) + k / 8) * 64 + (r % 8) * 8 + k % 8;
}

// The matrix descriptor of a k16 step of such an operand at `start` (gpu::wgmma_descriptor):
// core matrices adjacent in k 128 bytes apart, 8-row groups K·16 bytes apart.
template <int K>
__device__ __forceinline__ uint64_t descriptor(const void* start) {
  return gpu::wgmma_descriptor(start, 128, K * 16);
}

// Element (n, k) of an N×K operand in shared memory, MN-major without swizzle: core matrix
// (k/8, n/8) of 8 k × 8 n (n contiguous, 16 bytes a k) at ((k/8)·N/8 + n/8)·64 elements. So
// core matrices adjacent in n lie 128 bytes apart (the stride-dimension byte offset) and
// those adjacent in k N·16 bytes apart (the leading-dimension byte offset); step s starts
// 32·N·s bytes in.
template <int N>
__device__ __forceinline__ int mn_core_offset(int n, int k) {
  return ((k / 8) * (N / 8) + n / 8) * 64 + (k % 8) * 8 + n % 8;
}

template <class Op>
__device__ __forceinline__ uint32_t pack(const Op* v, int i) {
  return *reinterpret_cast<const uint32_t*>(v + i);
}

// One warpgroup per tile. Thread t: warp w = t/32, g = (t%32)/4, q = t%4. Accumulator
// element i of m64nN (i < N/2): row 16w + g + 8·((i/2)%2), column 8·(i/4) + 2q + i%2.
// A fragment of step s (m64k16, as mma.m16n8k16's A for the warp's 16 rows): rows
// 16w + g (+8), columns 16s + 2q (+1) and +8.
template <class Op, int N, int K, bool kARegisters, bool kBMnMajor>
__global__ void __launch_bounds__(128) wgmma_tiles_kernel(const Op* a, const Op* b, const float* c, float* d,
                                                          int scale_d) {
  __shared__ alignas(128) Op sA[64 * K];
  __shared__ alignas(128) Op sB[N * K];
  const int tile = blockIdx.x, t = threadIdx.x;
  const Op* A = a + size_t(tile) * 64 * K;
  const Op* B = b + size_t(tile) * N * K;
  for (int i = t; i < 64 * K; i += 128) sA[core_offset<K>(i / K, i % K)] = A[i];
  for (int i = t; i < N * K; i += 128) {
    sB[kBMnMajor ? mn_core_offset<N>(i / K, i % K) : core_offset<K>(i / K, i % K)] = B[i];
  }
  gpu::fence_proxy_async_shared();
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
  gpu::fence_registers(acc);
  gpu::wgmma_fence();
#pragma unroll
  for (int s = 0; s < K / 16; ++s) {
    const uint64_t db = kBMnMajor ? gpu::wgmma_descriptor(sB + 16 * N * s, N * 16, 128) : descriptor<K>(sB + 128 * s);
    const int sd = s == 0 ? scale_d : 1;
    if constexpr (kARegisters) {
      Wgmma<Op, N>::template rs<kBMnMajor>(acc, frag[s], db, sd);
    } else {
      Wgmma<Op, N>::template ss<kBMnMajor>(acc, descriptor<K>(sA + 128 * s), db, sd);
    }
  }
  gpu::wgmma_commit();
  gpu::wgmma_wait<0>();
  gpu::fence_registers(acc);
  float* D = d + size_t(tile) * 64 * N;
#pragma unroll
  for (int i = 0; i < N / 2; ++i) D[(row + 8 * ((i >> 1) & 1)) * N + 8 * (i >> 2) + 2 * q + (i & 1)] = acc[i];
}

template <class Op, int N, int K, bool kBMnMajor>
void launch(bool a_in_registers, int tiles, const Op* a, const Op* b, const float* c, float* d, int scale_d) {
  if (a_in_registers) {
    wgmma_tiles_kernel<Op, N, K, true, kBMnMajor><<<tiles, 128>>>(a, b, c, d, scale_d);
  } else {
    wgmma_tiles_kernel<Op, N, K, false, kBMnMajor><<<tiles, 128>>>(a, b, c, d, scale_d);
  }
}

template <class Op, int N, int K>
void launch_k(WgmmaShape s, int tiles, const Op* a, const Op* b, const float* c, float* d) {
  if (s.b_mn_major) {
    launch<Op, N, K, true>(s.a_in_registers, tiles, a, b, c, d, s.scale_d);
  } else {
    launch<Op, N, K, false>(s.a_in_registers, tiles, a, b, c, d, s.scale_d);
  }
}

template <class Op, int N>
void launch(WgmmaShape s, int tiles, const Op* a, const Op* b, const float* c, float* d) {
  switch (s.k) {
    case 16: return launch_k<Op, N, 16>(s, tiles, a, b, c, d);
    case 32: return launch_k<Op, N, 32>(s, tiles, a, b, c, d);
    case 64: return launch_k<Op, N, 64>(s, tiles, a, b, c, d);
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
