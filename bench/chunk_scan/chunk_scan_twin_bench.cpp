// chunk_scan_twin_bench: the host twin's speed, which bounds `ssmv run` on machines without a
// GPU (CI, development boxes): one 16-wide tensor-core step of the docs/design.md §4 model
// (items = steps), and the whole twin on a production-shaped prompt (H = 8, P = 64, N = 128,
// bf16, chunk 256; items = state updates) on 1 and 2 worker threads. Google Benchmark.
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "fast/chunk_scan/mma_model.h"
#include "fast/chunk_scan/tests/problem_gen.h"
#include "fast/chunk_scan/twin.h"

namespace {

using namespace ssmv;
using namespace ssmv::chunk_scan;

// Chains of 256 (16 steps each) over bf16 operands ~ N(0, 1), the twin's common case.
void BM_MmaChain256(benchmark::State& state) {
  std::mt19937_64 rng(1);
  std::normal_distribution<double> normal;
  std::vector<float> a(1 << 14), b(1 << 14);
  for (float& v : a) v = float(round_value(Format::bf16, normal(rng)));
  for (float& v : b) v = float(round_value(Format::bf16, normal(rng)));
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(mma_chain(&a[i], 1, &b[i], 1, 256, 0.0f));
    i = (i + 256) % a.size();
  }
  state.SetItemsProcessed(state.iterations() * 16);
}
BENCHMARK(BM_MmaChain256);

// The production contract on 512 tokens (two sequences, 300 and 212), H = 8, G = 2.
void BM_TwinProductionShape(benchmark::State& state) {
  testing::GenOptions o;
  o.H = 8, o.G = 2, o.P = 64, o.N = 128;
  o.seq_lens = {300, 212};
  o.z = true;
  o.initial_state = true;
  const Problem p = testing::make_problem(o, 11);
  Config cfg;
  cfg.threads = int(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(run_twin(p, cfg));
  state.SetItemsProcessed(state.iterations() * p.shape.num_tokens() * o.H * o.P * o.N);
}
BENCHMARK(BM_TwinProductionShape)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
