#include "fast/chunk_scan/tests/mma_probe.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "fast/chunk_scan/warp_tile.cuh"
#include "fast/common/cuda_check.h"

namespace ssmv::chunk_scan::testing {
namespace {

template <class Op>
__device__ uint32_t pack(const Op* v, int i) {
  return *reinterpret_cast<const uint32_t*>(v + i);
}

// One warp per tile; lane fragments as in warp_tile.cuh.
template <class Op>
__global__ void mma_tiles_kernel(const Op* a, const Op* b, const float* c, float* d) {
  const int tile = blockIdx.x, lane = threadIdx.x, g = lane >> 2, q = lane & 3;
  const Op* A = a + tile * 256;
  const Op* B = b + tile * 128;
  const float* C = c + tile * 128;
  float acc[4] = {C[g * 8 + 2 * q], C[g * 8 + 2 * q + 1], C[(g + 8) * 8 + 2 * q], C[(g + 8) * 8 + 2 * q + 1]};
  gpu::mma16816<Op>(acc, pack(A, g * 16 + 2 * q), pack(A, (g + 8) * 16 + 2 * q), pack(A, g * 16 + 2 * q + 8),
                    pack(A, (g + 8) * 16 + 2 * q + 8), pack(B, g * 16 + 2 * q), pack(B, g * 16 + 2 * q + 8));
  float* D = d + tile * 128;
  D[g * 8 + 2 * q] = acc[0];
  D[g * 8 + 2 * q + 1] = acc[1];
  D[(g + 8) * 8 + 2 * q] = acc[2];
  D[(g + 8) * 8 + 2 * q + 1] = acc[3];
}

template <class Op>
std::vector<float> run(const std::vector<float>& a, const std::vector<float>& b,
                       const std::vector<float>& c, int tiles) {
  std::vector<Op> ha(a.size()), hb(b.size());
  for (size_t i = 0; i < a.size(); ++i) ha[i] = Op(a[i]);
  for (size_t i = 0; i < b.size(); ++i) hb[i] = Op(b[i]);
  Op *da, *db;
  float *dc, *dd;
  SSMV_CUDA_CHECK(cudaMalloc(&da, ha.size() * sizeof(Op)));
  SSMV_CUDA_CHECK(cudaMalloc(&db, hb.size() * sizeof(Op)));
  SSMV_CUDA_CHECK(cudaMalloc(&dc, c.size() * 4));
  SSMV_CUDA_CHECK(cudaMalloc(&dd, c.size() * 4));
  SSMV_CUDA_CHECK(cudaMemcpy(da, ha.data(), ha.size() * sizeof(Op), cudaMemcpyHostToDevice));
  SSMV_CUDA_CHECK(cudaMemcpy(db, hb.data(), hb.size() * sizeof(Op), cudaMemcpyHostToDevice));
  SSMV_CUDA_CHECK(cudaMemcpy(dc, c.data(), c.size() * 4, cudaMemcpyHostToDevice));
  mma_tiles_kernel<Op><<<tiles, 32>>>(da, db, dc, dd);
  SSMV_CUDA_CHECK(cudaGetLastError());
  std::vector<float> d(c.size());
  SSMV_CUDA_CHECK(cudaMemcpy(d.data(), dd, d.size() * 4, cudaMemcpyDeviceToHost));
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);
  cudaFree(dd);
  return d;
}

}  // namespace

std::vector<float> run_mma_tiles(bool bf16, const std::vector<float>& a, const std::vector<float>& b,
                                 const std::vector<float>& c, int tiles) {
  return bf16 ? run<__nv_bfloat16>(a, b, c, tiles) : run<__half>(a, b, c, tiles);
}

}  // namespace ssmv::chunk_scan::testing
