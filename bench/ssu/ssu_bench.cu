// ssu_bench [iterations] [batch] [tokens] [state]: achieved bandwidth of the SSU kernel on the current GPU next to
// a device-to-device cudaMemcpy measured in the same run.
//
// Shapes: batch 1, 8, 64, 256 requests of one token, and 64, 256 requests of 2, 4, 8 tokens
// (no per-token states), H = 32, P = 64, N = 128, G = 1;
// input and output bf16; state fp32 and bf16; softplus, dt_bias, D per head, z gate.
// Bytes counted: the state read and written (2·batch·H·P·N·bytes(state)) plus every input
// read once and y written once. Time: CUDA events around each launch, the L2 flushed
// (a memset of 4× its size) before each, median of `iterations` launches (default 200).
// Kernel: the one launch() picks (Variant::automatic: "octet", "streamed", "tokens" or
// "per-item"), then on the same problem each other kernel that applies (per-item, streamed,
// tokens; the tokens kernel takes every launch).
// Copy: cudaMemcpyAsync device to device of the state's bytes, same timing, bandwidth
// counting bytes read plus written; also of 1 GiB (the card's copy ceiling).
// A second argument runs the rows of that batch alone (the geometry variants run 256 only), a
// third those of that many tokens per request, a fourth those of that state format (fp32,
// bf16): filters for a profiler's run (0 or "" for any).
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/ssu/flushed_timer.h"
#include "fast/common/cuda_check.h"
#include "fast/ssu/device_launch.h"
#include "fast/ssu/launch.h"
#include "fast/ssu/arithmetic.h"
#include "fast/ssu/ssu.h"
#include "fast/ssu/twin.h"
#include "fast/ssu/pack.h"
#include "fast/ssu/tests/problem_gen.h"

namespace {

using namespace ssmv;
using namespace ssmv::ssu;

double copy_gbps(bench::FlushedTimer& timer, size_t bytes, int iterations) {
  void *a = nullptr, *b = nullptr;
  SSMV_CUDA_CHECK(cudaMalloc(&a, bytes));
  SSMV_CUDA_CHECK(cudaMalloc(&b, bytes));
  SSMV_CUDA_CHECK(cudaMemset(a, 1, bytes));
  const double ms = timer.median_ms(iterations, [&] { SSMV_CUDA_CHECK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice)); });
  SSMV_CUDA_CHECK(cudaFree(a));
  SSMV_CUDA_CHECK(cudaFree(b));
  return 2.0 * double(bytes) / (ms * 1e-3) / 1e9;
}

testing::ProblemConfig bench_config(int batch, Format state) {
  testing::ProblemConfig c;
  c.requests = batch;
  c.H = 32;
  c.P = 64;
  c.N = 128;
  c.G = 1;
  c.formats = {Format::bf16, state, Format::bf16};
  return c;
}

// Before timing: this binary's kernel (its geometry variant) equals the host twin bit for
// bit on a batch-8 problem of the benchmark shape with a random pool, `tokens` per request.
bool matches_twin(Format state, int tokens) {
  testing::ProblemConfig c = bench_config(8, state);
  c.min_tokens = c.max_tokens = tokens;
  const testing::GeneratedProblem g = testing::make_problem(c, 11);
  HostLaunch host(g.decode, g.config);
  DeviceLaunch dev(host);
  dev.launch();
  const Result gpu = dev.download();
  const Result twin = run_twin(g.decode, g.config);
  return gpu.y == twin.y && gpu.state_pool == twin.state_pool;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const int iterations = argc > 1 ? std::atoi(argv[1]) : 200;
    // Optional filters (for profilers): batch, tokens per request, state format name.
    const int only_batch = argc > 2 ? std::atoi(argv[2]) : 0;
    const int only_tokens = argc > 3 ? std::atoi(argv[3]) : 0;
    const std::string only_state = argc > 4 ? argv[4] : "";
    cudaDeviceProp prop;
    SSMV_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    std::printf("device %s, %d SMs, L2 %d MiB; kernel variant: %d rows/warp, %d groups for 16-bit states, min "
                "blocks/SM %d; streamed kernel for fp32 states %s, min blocks/SM %d, items of %d groups (%d for fp32)\n",
                prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20, kRowsPerWarp, kGroups16,
                SSMV_SSU_MIN_BLOCKS, SSMV_SSU_STREAM_FP32 ? "on" : "off",
                SSMV_SSU_STREAM_MIN_BLOCKS, SSMV_SSU_STREAM_GROUPS,
                SSMV_SSU_STREAM_GROUPS_FP32);
    for (Format state : {Format::fp32, Format::bf16}) {
      for (int tokens : {1, 4}) {
        const bool same = matches_twin(state, tokens);
        std::printf("GPU = twin bit for bit (batch 8, %d token(s) per request, %s state): %s\n", tokens,
                    std::string(format_name(state)).c_str(), same ? "yes" : "NO");
        if (!same) return 1;
      }
    }
    bench::FlushedTimer timer;
    const double big_copy = copy_gbps(timer, size_t(1) << 30, 50);
    std::printf("copy 1 GiB device to device: %.0f GB/s (read + write)\n", big_copy);
    std::printf("%-6s %6s %6s %-9s %10s %10s %10s %10s %8s %8s\n", "state", "batch", "tokens", "kernel", "MB moved",
                "kernel us", "kernel GB/s", "copy GB/s", "of copy", "of 1GiB");
    // One token per request (the decode step), then 2, 4 and 8 tokens per request without
    // per-token states (multi-token decode: speculative decoding's draft tokens) at batch 1,
    // 64 and 256 (FlashInfer's fi_bench times the same rows).
    struct Row {
      int batch, tokens;
    };
    const Row rows[] = {{1, 1}, {8, 1},  {64, 1}, {256, 1}, {1, 2},  {64, 2}, {256, 2},
                        {1, 4}, {64, 4}, {256, 4}, {1, 8},  {64, 8}, {256, 8}};
    for (Format state : {Format::fp32, Format::bf16}) {
      for (const Row& row : rows) {
        if (only_batch != 0 && row.batch != only_batch) continue;
        if (only_tokens != 0 && row.tokens != only_tokens) continue;
        if (!only_state.empty() && only_state != format_name(state)) continue;
        testing::ProblemConfig c = bench_config(row.batch, state);
        c.min_tokens = c.max_tokens = row.tokens;
        c.random_pool = false;  // the warm-up launches make it non-zero
        const testing::GeneratedProblem g = testing::make_problem(c, 7);
        HostLaunch host(g.decode, g.config);
        DeviceLaunch dev(host);
        const int sb = storage_bytes(state);
        const double tokens = double(row.batch) * row.tokens;
        const double state_bytes = double(row.batch) * c.H * c.P * c.N * sb;
        const double io = tokens * c.H * c.P * 2 * 3      // x, z, y
                          + tokens * c.H * 2                // dt
                          + tokens * c.G * c.N * 2 * 2      // B, C
                          + double(c.H) * 4 * 3             // A, dt_bias, D
                          + double(row.batch) * 4 * 2 + 4;  // cu_seqlens, slot_in
        const double moved = 2 * state_bytes + io;
        const double copy = copy_gbps(timer, size_t(state_bytes), iterations);
        // The automatic choice, then each other kernel that applies: per-item, streamed (one
        // token per request), tokens.
        const bool streamed = takes_streamed_kernel(dev.params());
        const bool octet = why_not_octet(dev.params()) == nullptr;
        const bool multi = row.tokens > 1;
        const bool streamable = why_not_streamed(dev.params()) == nullptr && !multi;
        const char* automatic = octet ? "octet" : streamed ? "streamed" : multi ? "tokens" : "per-item";
        struct Timed {
          Variant kernel;
          const char* name;
        };
        std::vector<Timed> timed = {{Variant::automatic, automatic}};
        if (streamed || octet || multi) timed.push_back({Variant::per_item, "per-item"});
        if (octet && streamable) timed.push_back({Variant::streamed, "streamed"});
        if (streamed || octet || !multi) timed.push_back({Variant::tokens, "tokens"});
        for (const Timed& k : timed) {
          const double ms = timer.median_ms(iterations, [&] { launch(dev.params(), nullptr, {k.kernel, 0}); });
          const double gbps = moved / (ms * 1e-3) / 1e9;
          std::printf("%-6s %6d %6d %-9s %10.2f %10.2f %10.0f %10.0f %7.0f%% %7.0f%%\n",
                      std::string(format_name(state)).c_str(), row.batch, row.tokens, k.name,
                      moved / 1e6, ms * 1e3, gbps,
                      copy, 100 * gbps / copy, 100 * gbps / big_copy);
          (void)dev.download();  // synchronizes and surfaces any asynchronous error
        }
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ssu_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
