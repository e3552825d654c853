// chunk_scan on the GPU: median time of the five stages (CUDA events) for the issue-4
// shapes (H = 32, P = 64, N = 128, G = 1, chunk 256, bf16 in/out, fp32 states, dt_bias,
// softplus, D; final states returned), each stage alone, and the floor of the shape:
// the fewest bytes (inputs read once, outputs written once) at the measured copy
// bandwidth and the matrix flops at the bf16 rate given on the command line. Column e: names
// stage (e)'s kernel (mma.sync on tensor cores, fma for the fp32 contract).
//   chunk_scan_bench [bf16_tflops=790]
// The copy bandwidth is measured here (device-to-device cudaMemcpy of 2 GiB, counting
// bytes read + written). Figures go into bench/NOTES.md, section "chunk_scan (issue 4)".
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "fast/chunk_scan/device_launch.h"
#include "fast/chunk_scan/tests/problem_gen.h"
#include "fast/common/cuda_check.h"

namespace {

using namespace ssmv;
using namespace ssmv::chunk_scan;

template <class F>
double median_us(F&& body, int reps) {
  cudaEvent_t a, b;
  SSMV_CUDA_CHECK(cudaEventCreate(&a));
  SSMV_CUDA_CHECK(cudaEventCreate(&b));
  for (int i = 0; i < 5; ++i) body();  // warm-up
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    SSMV_CUDA_CHECK(cudaEventRecord(a));
    body();
    SSMV_CUDA_CHECK(cudaEventRecord(b));
    SSMV_CUDA_CHECK(cudaEventSynchronize(b));
    float ms = 0;
    SSMV_CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms * 1000.0);
  }
  std::sort(t.begin(), t.end());
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return t[t.size() / 2];
}

double copy_bandwidth_gbs() {
  const size_t bytes = size_t(2) << 30;
  void *src, *dst;
  SSMV_CUDA_CHECK(cudaMalloc(&src, bytes));
  SSMV_CUDA_CHECK(cudaMalloc(&dst, bytes));
  SSMV_CUDA_CHECK(cudaMemset(src, 1, bytes));
  const double us = median_us([&] { SSMV_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice)); }, 20);
  cudaFree(src);
  cudaFree(dst);
  return 2.0 * double(bytes) / us * 1e-3;  // GB/s = bytes / (us·1e3)
}

void run_case(const char* name, std::vector<int64_t> lens, double gbs, double tflops) {
  testing::GenOptions o;
  o.input = Format::bf16;
  o.output = Format::bf16;
  o.state = Format::fp32;
  o.H = 32, o.P = 64, o.N = 128, o.G = 1;
  o.seq_lens = lens;
  o.z = false;
  o.D = true;
  const Problem p = testing::make_problem(o, 2026);
  const int64_t T = p.shape.num_tokens(), H = 32, P = 64, N = 128, G = 1, L = 256;
  const int64_t S = p.shape.num_sequences();
  // Floor: x, dt, B, C read, y written (bf16), final states written (fp32); matrix flops of
  // the chunked algorithm (chunk states 2THPN, inter term 2THPN, causal intra term THPL,
  // causal C·Bᵀ TLNG).
  const double bytes = double(T * H * P * 2 * 2 + T * H * 2 + T * G * N * 2 * 2 + S * H * P * N * 4);
  const double flops = double(4 * T * H * P * N + T * H * P * L + T * L * N * G);
  const double floor_mem = bytes / gbs * 1e-3, floor_flops = flops / tflops * 1e-6;  // µs
  for (ContractKind kind : {ContractKind::production, ContractKind::fp32}) {
    DeviceLaunch gpu(p, Config{kind, L, false, false});
    const char* stage_e = gpu.params().use_mma ? "mma.sync" : "fma";
    const double total = median_us([&] { gpu.launch(); }, 50);
    double stage_us[5];
    for (int s = 0; s < 5; ++s) stage_us[s] = median_us([&] { gpu.launch_stage(s); }, 50);
    std::printf("%-22s %-10s e:%-8s total %8.1f us | a %6.1f b %6.1f c %6.1f d %6.1f e %6.1f | floor %.1f us "
                "(bytes %.1f MB -> %.1f us, flops %.2f G -> %.1f us) | %.1fx floor\n",
                name, std::string(contract_kind_name(kind)).c_str(), stage_e, total, stage_us[0], stage_us[1],
                stage_us[2], stage_us[3], stage_us[4], std::max(floor_mem, floor_flops), bytes * 1e-6,
                floor_mem, flops * 1e-9, floor_flops, total / std::max(floor_mem, floor_flops));
  }
}

}  // namespace

int main(int argc, char** argv) {
  const double tflops = argc > 1 ? std::atof(argv[1]) : 790.0;
  cudaDeviceProp prop;
  SSMV_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  const double gbs = copy_bandwidth_gbs();
  std::printf("device %s, %d SMs; copy bandwidth %.0f GB/s (read+write); bf16 rate %.0f TFLOP/s\n",
              prop.name, prop.multiProcessorCount, gbs, tflops);
  run_case("1 x 8192 tokens", {8192}, gbs, tflops);
  run_case("8 x 1024 tokens", std::vector<int64_t>(8, 1024), gbs, tflops);
  return 0;
}
