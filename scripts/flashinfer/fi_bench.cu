// fi_bench [iterations]: FlashInfer's CUDA selective_state_update timed the way bench/ssu/ssu_bench
// times ssmv's SSU kernel, for the same-run comparison of issue 19 (bench/NOTES.md): H = 32,
// P = 64 (DIM), N = 128 (DSTATE), G = 1, bf16 x, B, C, z; dt, D, dt_bias fp32 (FlashInfer's
// weight_t); softplus, D per head, z gate; state fp32 and bf16; batch 1, 64 and 256; one token per
// request (invokeSelectiveStateUpdate, algorithm auto) and NTOK tokens per request in one launch
// (invokeSelectiveStateUpdateMTP; NTOK is a compile-time constant of FlashInfer's template, so
// one binary per token count: build.sh). Time: CUDA events around each launch, the L2 flushed (a
// memset of 4× its size) before each, median of `iterations` (default 200) after 5 warm-ups.
// The timing is bench/ssu/flushed_timer.h's. Built from FlashInfer's own headers (build.sh); no
// FlashInfer code is in this repository.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#ifndef NTOK
#define NTOK 4
#endif
using cuSeqlensIndex_t = int32_t;
using numAcceptedIndex_t = int32_t;
constexpr int DIM = 64;
constexpr int DSTATE = 128;
constexpr int NTOKENS_MTP = NTOK;
constexpr int PHILOX_ROUNDS = 0;

#include <flashinfer/mamba/selective_state_update.cuh>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "bench/ssu/flushed_timer.h"

namespace fi = flashinfer::mamba;

namespace {

using ssmv::bench::cuda_ok;

template <class T>
T* upload(size_t n, std::mt19937& rng, float scale) {
  std::normal_distribution<float> nd(0.f, scale);
  std::vector<T> h(n);
  for (auto& v : h) v = T(nd(rng));
  T* d = nullptr;
  cuda_ok(cudaMalloc(&d, n * sizeof(T)), "cudaMalloc");
  cuda_ok(cudaMemcpy(d, h.data(), n * sizeof(T), cudaMemcpyHostToDevice), "H2D");
  return d;
}

// One row: `batch` requests of K tokens (K = 1: the single-token kernel), median µs.
template <class state_t>
double time_row(ssmv::bench::FlushedTimer& timer, int iterations, int batch, int K) {
  const int H = 32, P = DIM, N = DSTATE, G = 1, slots = batch;
  std::mt19937 rng(7);
  const size_t tokens = size_t(batch) * K;
  auto* x = upload<__nv_bfloat16>(tokens * H * P, rng, 1.f);
  auto* z = upload<__nv_bfloat16>(tokens * H * P, rng, 1.f);
  auto* B = upload<__nv_bfloat16>(tokens * G * N, rng, 1.f);
  auto* C = upload<__nv_bfloat16>(tokens * G * N, rng, 1.f);
  auto* y = upload<__nv_bfloat16>(tokens * H * P, rng, 1.f);
  auto* dt = upload<float>(tokens * H, rng, 1.f);
  auto* A = upload<float>(H, rng, 1.f);  // the timing does not depend on the values (fast-math, no branches on them)
  auto* D = upload<float>(H, rng, 1.f);
  auto* dt_bias = upload<float>(H, rng, 0.1f);
  auto* state = upload<state_t>(size_t(slots) * H * P * N, rng, 0.5f);
  std::vector<int32_t> slot_h(batch);
  for (int b = 0; b < batch; ++b) slot_h[b] = b;
  int32_t* slot = nullptr;
  cuda_ok(cudaMalloc(&slot, batch * sizeof(int32_t)), "cudaMalloc");
  cuda_ok(cudaMemcpy(slot, slot_h.data(), batch * sizeof(int32_t), cudaMemcpyHostToDevice), "H2D");

  fi::mtp::SelectiveStateMTPParams p;
  p.batch = batch; p.nheads = H; p.dim = P; p.dstate = N; p.ngroups = G; p.state_cache_size = slots;
  p.pad_slot_id = -1;
  p.state = state; p.x = x; p.dt = dt; p.dt_bias = dt_bias; p.A = A; p.B = B; p.C = C; p.D = D; p.z = z;
  p.output = y; p.state_batch_indices = slot; p.state_stride_batch = int64_t(H) * P * N;
  p.dt_softplus = true; p.update_state = true; p.rand_seed = nullptr;
  p.x_stride_batch = int64_t(K) * H * P; p.z_stride_batch = p.x_stride_batch; p.out_stride_batch = p.x_stride_batch;
  p.dt_stride_batch = int64_t(K) * H; p.B_stride_batch = int64_t(K) * G * N; p.C_stride_batch = p.B_stride_batch;
  if (K > 1) {
    p.ntokens_mtp = K; p.cache_steps = 0;
    p.x_stride_mtp = int64_t(H) * P; p.z_stride_mtp = p.x_stride_mtp; p.out_stride_mtp = p.x_stride_mtp;
    p.dt_stride_mtp = H; p.B_stride_mtp = int64_t(G) * N; p.C_stride_mtp = p.B_stride_mtp;
  }
  const double ms = timer.median_ms(iterations, [&] {
    if (K == 1) {
      fi::invokeSelectiveStateUpdate<__nv_bfloat16, float, float, state_t, int32_t, void>(p, fi::SSUAlgorithm::kAuto,
                                                                                          nullptr);
    } else {
      fi::mtp::invokeSelectiveStateUpdateMTP<__nv_bfloat16, float, float, state_t, int32_t, void>(
          p, fi::SSUAlgorithm::kAuto, nullptr);
    }
    cuda_ok(cudaGetLastError(), "launch");
  });
  cuda_ok(cudaDeviceSynchronize(), "sync");
  for (void* ptr : {(void*)x, (void*)z, (void*)B, (void*)C, (void*)y, (void*)dt, (void*)A, (void*)D, (void*)dt_bias,
                    (void*)state, (void*)slot})
    cudaFree(ptr);
  return ms * 1e3;
}

}  // namespace

int main(int argc, char** argv) try {
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 200;
  ssmv::bench::FlushedTimer timer;
  std::printf("FlashInfer selective_state_update, H 32, P %d, N %d, G 1, bf16 inputs; median of %d, L2 flushed\n",
              DIM, DSTATE, iterations);
  std::printf("%-6s %6s %6s %10s\n", "state", "batch", "tokens", "us");
  for (int K : {1, NTOK}) {
    if (K == 1 && NTOK != 2) continue;  // the single-token rows once, in the NTOK = 2 binary
    for (int batch : {1, 64, 256}) {
      std::printf("%-6s %6d %6d %10.2f\n", "fp32", batch, K, time_row<float>(timer, iterations, batch, K));
      std::printf("%-6s %6d %6d %10.2f\n", "bf16", batch, K, time_row<__nv_bfloat16>(timer, iterations, batch, K));
    }
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "fi_bench: %s\n", e.what());
  return 1;
}
