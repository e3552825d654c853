// chunk_scan on the GPU: uploads a Problem, runs the five stage kernels (kernels.cuh) and
// downloads the Result in the same form as the host twin (twin.h), so the two compare
// bit for bit. CUDA builds only (gpu.h declares run_gpu in every build).
#pragma once

#include <cuda_runtime_api.h>

#include <memory>

#include "fast/chunk_scan/chunk_scan.h"
#include "fast/chunk_scan/params.h"

namespace ssmv::chunk_scan {

class DeviceLaunch {
 public:
  // Validates (ProblemError), plans the chunks, allocates and uploads. y and the states
  // are poisoned (all bits set: NaN in every format) so an unwritten element shows.
  DeviceLaunch(const Problem& problem, const Config& config);
  ~DeviceLaunch();
  DeviceLaunch(const DeviceLaunch&) = delete;
  DeviceLaunch& operator=(const DeviceLaunch&) = delete;

  // Enqueues the five stages on `stream` (check_params(params()) runs first); stages b–e are
  // launched programmatically (each may start while the one before it finishes).
  void launch(cudaStream_t stream = nullptr);
  // Enqueues one stage alone (0..4 = a..e), for timing, launched plainly (it starts after
  // everything before it on `stream`); the stages before it must have run on the same
  // buffers.
  void launch_stage(int stage, cudaStream_t stream = nullptr);
  // Synchronizes and copies y, the states and (Config::keep_intermediates) the stages'
  // intermediates back.
  Result download() const;
  const Params& params() const { return params_; }
  const ChunkPlan& plan() const { return plan_; }

 private:
  struct Buffers;
  std::unique_ptr<Buffers> buffers_;
  Params params_;
  ChunkPlan plan_;
  Config config_;
};

}  // namespace ssmv::chunk_scan
