// fast_math.h on the GPU equals fast_math.h on the CPU bit for bit: every bf16 pattern and
// 2^22 random fp32 bit patterns (all finite, infinite and NaN classes) through exp, log1p,
// softplus, sigmoid, silu, tanh, cos and sin, and cos and sin on 2^22 random arguments of
// [0, 8] (the Mamba-3 step's reduced angles). Skipped without a CUDA device.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "fast/common/cuda_check.h"
#include "fast/common/fast_math.h"

namespace {

constexpr int kFunctions = 8;

SSMV_HD float apply(int f, float x) {
  switch (f) {
    case 0: return ssmv::fm::exp(x);
    case 1: return ssmv::fm::log1p(x);
    case 2: return ssmv::fm::softplus(x);
    case 3: return ssmv::fm::sigmoid(x);
    case 4: return ssmv::fm::silu(x);
    case 5: return ssmv::fm::tanh(x);
    case 6: return ssmv::fm::cos(x);
    default: return ssmv::fm::sin(x);
  }
}

// args [n], out [kFunctions, n]
__global__ void apply_all(const float* args, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  for (int f = 0; f < kFunctions; ++f) out[f * n + i] = apply(f, args[i]);
}

TEST(FastMathGpu, EqualsHostBitForBit) {
  if (!ssmv::cuda_device_available()) GTEST_SKIP() << "no CUDA device";
  std::vector<float> args;
  for (uint32_t b = 0; b < 0x10000u; ++b) args.push_back(ssmv::fm::float_of(b << 16));
  std::mt19937 rng(0x5eed0004u);
  for (int i = 0; i < (1 << 22); ++i) args.push_back(ssmv::fm::float_of(static_cast<uint32_t>(rng())));
  std::uniform_real_distribution<float> angle(0.0f, 8.0f);
  for (int i = 0; i < (1 << 22); ++i) args.push_back(angle(rng));
  const int n = static_cast<int>(args.size());
  float* d_args = nullptr;
  float* d_out = nullptr;
  SSMV_CUDA_CHECK(cudaMalloc(&d_args, sizeof(float) * n));
  SSMV_CUDA_CHECK(cudaMalloc(&d_out, sizeof(float) * n * kFunctions));
  SSMV_CUDA_CHECK(cudaMemcpy(d_args, args.data(), sizeof(float) * n, cudaMemcpyHostToDevice));
  apply_all<<<(n + 255) / 256, 256>>>(d_args, d_out, n);
  SSMV_CUDA_CHECK(cudaGetLastError());
  std::vector<float> out(size_t(n) * kFunctions);
  SSMV_CUDA_CHECK(cudaMemcpy(out.data(), d_out, sizeof(float) * out.size(), cudaMemcpyDeviceToHost));
  SSMV_CUDA_CHECK(cudaFree(d_args));
  SSMV_CUDA_CHECK(cudaFree(d_out));
  int64_t mismatches = 0, nan_results = 0;
  for (int f = 0; f < kFunctions; ++f) {
    for (int i = 0; i < n; ++i) {
      const float host = apply(f, args[i]);
      const float gpu = out[size_t(f) * n + i];
      if (host != host && gpu != gpu) {  // NaN payloads may differ; both NaN is agreement
        ++nan_results;
        continue;
      }
      if (ssmv::fm::bits_of(host) != ssmv::fm::bits_of(gpu) && ++mismatches <= 10) {
        ADD_FAILURE() << "function " << f << " x = " << std::hexfloat << args[i] << ": host " << host
                      << " gpu " << gpu;
      }
    }
  }
  EXPECT_EQ(mismatches, 0);
  EXPECT_LT(nan_results, int64_t(n) * kFunctions / 4);  // most results are numbers
}

}  // namespace
