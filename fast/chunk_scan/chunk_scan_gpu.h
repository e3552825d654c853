// chunk_scan on the GPU: uploads a Problem, runs the five stage kernels (kernels.cuh) and
// downloads the Result in the same form as the host twin (twin.h), so the two compare
// bit for bit. Link ssmv_chunk_scan_cuda (built when CUDA is found).
#pragma once

#include <cuda_runtime_api.h>

#include <memory>

#include "fast/chunk_scan/chunk_scan.h"
#include "fast/chunk_scan/params.h"

namespace ssmv::chunk_scan {

class ChunkScanGpu {
 public:
  // Validates (ProblemError), plans the chunks, allocates and uploads. y and the states
  // are poisoned (all bits set: NaN in every format) so an unwritten element shows.
  ChunkScanGpu(const Problem& problem, const Config& config);
  ~ChunkScanGpu();
  ChunkScanGpu(const ChunkScanGpu&) = delete;
  ChunkScanGpu& operator=(const ChunkScanGpu&) = delete;

  // Enqueues the five stages on `stream` (validate(params()) runs first); stages b–e are
  // launched programmatically (each may start while the one before it finishes).
  void launch(cudaStream_t stream = nullptr);
  // Enqueues one stage alone (0..4 = a..e), for timing, launched plainly (it starts after
  // everything before it on `stream`); the stages before it must have run on the same
  // buffers.
  void launch_stage(int stage, cudaStream_t stream = nullptr);
  // Synchronizes and copies y, the states and (Config::keep_intermediates) the stages'
  // intermediates back.
  Result download() const;
  const ChunkScanParams& params() const { return params_; }
  const ChunkPlan& plan() const { return plan_; }

 private:
  struct Buffers;
  std::unique_ptr<Buffers> buffers_;
  ChunkScanParams params_;
  ChunkPlan plan_;
  Config config_;
};

// Upload, launch, download.
Result run_gpu(const Problem& problem, const Config& config);

}  // namespace ssmv::chunk_scan
