// A HostLaunch copied to the GPU: device buffers with the same layout and a Params
// pointing at them. Used by run_gpu, the GPU tests and the benchmark. CUDA builds only.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <vector>

#include "fast/ssu/launch.h"
#include "fast/ssu/pack.h"

namespace ssmv::ssu {

class DeviceLaunch {
 public:
  explicit DeviceLaunch(const HostLaunch& host);  // allocates and uploads every buffer
  ~DeviceLaunch();
  DeviceLaunch(const DeviceLaunch&) = delete;
  DeviceLaunch& operator=(const DeviceLaunch&) = delete;

  const Params& params() const { return params_; }
  void launch(cudaStream_t stream = nullptr, const LaunchOptions& options = {}) const;  // ssu::launch(params())
  // Restores the pool to the uploaded one (before a repeated run).
  void reset_state(const HostLaunch& host);
  Result download() const;  // synchronizes, then reads y and the pool back

 private:
  void* upload(const void* data, size_t bytes);
  std::vector<void*> allocations_;
  size_t y_bytes_ = 0, state_bytes_ = 0;
  Params params_;
};

}  // namespace ssmv::ssu
