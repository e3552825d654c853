// ssu_twin_bench: how many small SSU problems per second the host twin runs (what the
// property suites pay per case), through the host API (validation, packing, twin, read
// back) as property tests call it. Google Benchmark; items_per_second = problems/s.
#include <benchmark/benchmark.h>

#include "fast/ssu/ssu.h"
#include "fast/ssu/pack.h"
#include "fast/ssu/twin.h"
#include "fast/ssu/tests/problem_gen.h"

namespace {

using namespace ssmv;
using namespace ssmv::ssu;

// A fixed small problem: R requests of one token, H = 2, P = 8, N = 16, bf16/fp32/bf16.
void BM_TwinSmall(benchmark::State& state) {
  testing::ProblemConfig c;
  c.requests = state.range(0);
  c.H = 2;
  c.P = 8;
  c.N = 16;
  c.formats = {Format::bf16, Format::fp32, Format::bf16};
  const testing::GeneratedProblem g = testing::make_problem(c, 3);
  for (auto _ : state) benchmark::DoNotOptimize(run_twin(g.decode, g.config));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_TwinSmall)->Arg(1)->Arg(4);

// The GPU test's random configurations (sizes up to 256, up to 4·10^5 element-steps).
void BM_TwinRandomConfigs(benchmark::State& state) {
  std::vector<testing::GeneratedProblem> problems;
  for (uint64_t seed = 1000; seed < 1064; ++seed) problems.push_back(testing::make_problem(testing::random_config(seed), seed));
  size_t i = 0;
  for (auto _ : state) {
    const auto& g = problems[i++ % problems.size()];
    benchmark::DoNotOptimize(run_twin(g.decode, g.config));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_TwinRandomConfigs);

// One request at the benchmark shape H = 32, P = 64, N = 128 (fp32 state).
testing::GeneratedProblem serving_shape_problem() {
  testing::ProblemConfig c;
  c.requests = 1;
  c.H = 32;
  c.P = 64;
  c.N = 128;
  c.formats = {Format::bf16, Format::fp32, Format::bf16};
  return testing::make_problem(c, 3);
}

// One decode step at the benchmark shape, batch 1.
void BM_TwinServingShapeBatch1(benchmark::State& state) {
  const testing::GeneratedProblem g = serving_shape_problem();
  for (auto _ : state) benchmark::DoNotOptimize(run_twin(g.decode, g.config));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_TwinServingShapeBatch1)->Unit(benchmark::kMillisecond);

// The twin alone on packed buffers (no validation, packing or read-back): the arithmetic's
// cost, in element-steps (one (p, n) state update and its fma into y) per second.
void BM_TwinOnlyServingShape(benchmark::State& state) {
  const testing::GeneratedProblem g = serving_shape_problem();
  HostLaunch host(g.decode, g.config);
  for (auto _ : state) run_twin(host.params());
  const Shape& s = g.decode.problem.shape;
  state.SetItemsProcessed(state.iterations() * s.H * s.P * s.N);
}
BENCHMARK(BM_TwinOnlyServingShape)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
