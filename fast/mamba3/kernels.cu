// The bundled Mamba-3 SISO decode step kernel: one block per (sequence b, head h) of a launch,
// plain and correct rather than fast (issue 31 item 6). Its arithmetic is arithmetic.h's, which the
// host twin runs too; this file only maps it onto threads:
//   1. threads over pairs r < N/2: pair_step (angle, turned q and k into shared memory, the old
//      k_prev into shared memory);
//   2. __syncthreads; threads over rows p < P: row_step (S row, y, x_prev) and over n < N:
//      store_b_prev (after the barrier: every old k_prev has been read).
// Every thread computes the gates itself (the same scalars). No atomics, no reductions across
// threads: every output element is one thread's fixed sequence of operations.
#include <string>

#include "fast/common/cuda_check.h"
#include "fast/mamba3/arithmetic.h"
#include "fast/mamba3/check.h"
#include "fast/mamba3/launch.h"
#include "spec/problem.h"  // ProblemError

namespace ssmv::mamba3_step {
namespace {

__global__ void step_kernel(const Params p) {
  extern __shared__ float shared[];  // [3N]: q, k, old k_prev
  const int64_t item = blockIdx.x, b = item / p.H, h = item % p.H;
  const int64_t t = p.token[b];
  if (t < 0) return;
  float* q = shared;
  float* k = q + p.N;
  float* kprev = k + p.N;
  for (int64_t r = threadIdx.x; r < p.N / 2; r += blockDim.x) pair_step(p, b, h, t, r, q, k, kprev);
  __syncthreads();
  const Gates g = gates(p, t, h);
  for (int64_t pp = threadIdx.x; pp < p.P; pp += blockDim.x) row_step(p, b, h, t, pp, g, q, k, kprev);
  for (int64_t n = threadIdx.x; n < p.N; n += blockDim.x) store_b_prev(p, b, h, n, k);
}

}  // namespace

void launch(const Params& p, cudaStream_t stream, int block_threads) {
  check_params(p);
  if (block_threads < 1 || block_threads > 1024) {
    throw ProblemError("mamba3_step::launch: block_threads = " + std::to_string(block_threads) +
                       " outside [1, 1024]");
  }
  if (p.batch == 0) return;
  const size_t shared = size_t(3 * p.N) * sizeof(float);  // <= 24 KiB (kMaxN)
  step_kernel<<<unsigned(p.batch * p.H), unsigned(block_threads), shared, stream>>>(p);
  SSMV_CUDA_CHECK(cudaGetLastError());
}

}  // namespace ssmv::mamba3_step
