// The fp32 expressions of FlashInfer's selective_state_update, written as its headers write
// them (include/flashinfer/mamba/common.cuh, kernel_selective_state_update_stp.cuh,
// kernel_selective_state_update_mtp_simple.cuh) and compiled as its JIT compiles them
// (flashinfer/jit/core.py gen_jit_spec: -use_fast_math, -O3), for measure_budgets.py.
//
// Build (scripts/flashinfer/README.md):
//   nvcc -O3 -use_fast_math -arch=sm_90 -shared -Xcompiler -fPIC fast_math_eval.cu -o libfi_fast_math.so
//
// fi_eval(fid, x, y, n) evaluates on device pointers x, y of n floats:
//   0  __expf(x)                                      the decay __expf(A_value * dt_value)
//   1  __expf(fminf(x, 0.f))                          (bit-for-bit check of 0 on x <= 0)
//   2  x <= 20.f ? __logf(1.f + __expf(x)) : x        thresholded_softplus
//   3  __fdividef(1.f, 1.f + __expf(0.f - x))         sig_z
//   4  x * __fdividef(1.f, 1.f + __expf(0.f - x))     silu_z = z_value * sig_z
#include <cstdint>
#include <cuda_runtime.h>

namespace {

__device__ __forceinline__ float softplus(float x) { return __logf(1.f + __expf(x)); }

__device__ __forceinline__ float thresholded_softplus(float v) {
  constexpr float threshold = 20.f;
  return (v <= threshold) ? softplus(v) : v;
}

__device__ __forceinline__ float sig(float z) { return __fdividef(1.f, (1.f + __expf(0.f - z))); }

template <int FID>
__global__ void eval_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float v = x[i];
  float r;
  if constexpr (FID == 0) r = __expf(v);
  else if constexpr (FID == 1) r = __expf(fminf(v, 0.f));
  else if constexpr (FID == 2) r = thresholded_softplus(v);
  else if constexpr (FID == 3) r = sig(v);
  else r = v * sig(v);
  y[i] = r;
}

}  // namespace

extern "C" int fi_eval(int fid, const float* x, float* y, int64_t n) {
  const int threads = 256;
  const unsigned blocks = unsigned((n + threads - 1) / threads);
  switch (fid) {
    case 0: eval_kernel<0><<<blocks, threads>>>(x, y, n); break;
    case 1: eval_kernel<1><<<blocks, threads>>>(x, y, n); break;
    case 2: eval_kernel<2><<<blocks, threads>>>(x, y, n); break;
    case 3: eval_kernel<3><<<blocks, threads>>>(x, y, n); break;
    case 4: eval_kernel<4><<<blocks, threads>>>(x, y, n); break;
    default: return 1;
  }
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
