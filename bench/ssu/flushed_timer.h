// The timing method of the SSU benchmarks (bench/ssu/ssu_bench.cu and, for the same-run
// comparison, scripts/flashinfer/fi_bench.cu): CUDA events around each run of the work, the
// L2 flushed before each (a memset of 4× its size), the median of `iterations` runs after 5
// warm-ups. Header-only (CUDA runtime API only), so that programs built outside CMake include
// it too.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ssmv::bench {

inline void cuda_ok(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

class FlushedTimer {
 public:
  FlushedTimer() {
    cudaDeviceProp prop;
    cuda_ok(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    flush_bytes_ = size_t(prop.l2CacheSize) * 4;
    cuda_ok(cudaMalloc(&flush_, flush_bytes_), "cudaMalloc (L2 flush buffer)");
    cuda_ok(cudaEventCreate(&start_), "cudaEventCreate");
    cuda_ok(cudaEventCreate(&stop_), "cudaEventCreate");
  }
  ~FlushedTimer() {
    cudaFree(flush_);
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  FlushedTimer(const FlushedTimer&) = delete;
  FlushedTimer& operator=(const FlushedTimer&) = delete;

  // Median milliseconds of `work` over `iterations` timed runs after 5 warm-ups.
  double median_ms(int iterations, const std::function<void()>& work) {
    for (int i = 0; i < 5; ++i) work();
    std::vector<float> ms(iterations);
    for (int i = 0; i < iterations; ++i) {
      cuda_ok(cudaMemsetAsync(flush_, i & 0xff, flush_bytes_), "cudaMemsetAsync (L2 flush)");
      cuda_ok(cudaEventRecord(start_), "cudaEventRecord");
      work();
      cuda_ok(cudaEventRecord(stop_), "cudaEventRecord");
      cuda_ok(cudaEventSynchronize(stop_), "cudaEventSynchronize");
      cuda_ok(cudaEventElapsedTime(&ms[i], start_, stop_), "cudaEventElapsedTime");
    }
    std::sort(ms.begin(), ms.end());
    return ms[iterations / 2];
  }

 private:
  void* flush_ = nullptr;
  size_t flush_bytes_ = 0;
  cudaEvent_t start_, stop_;
};

}  // namespace ssmv::bench
