// Reference throughput and memory (issue 2 item 7).
//
// One state update = one (p, n) element advanced by one token, its share of the output
// included, at the default precision (127-bit primary run + 191-bit certifying run +
// double magnitudes + the certification of every y and final state). Shape: one
// sequence, H = 4, P = 64, N = 128, Mamba2-like bf16 data with softplus, D and z.
// The streaming path keeps nothing per token, so peak memory must not grow with T:
// maxrss_MiB (getrusage, whole process, monotone) is reported per benchmark; run one
// benchmark per process (--benchmark_filter) to read a figure for one T.
//
//   build-ref/bench/reference/reference_bench --benchmark_filter='Streaming/256/1'
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <atomic>

#include "reference/random_problem.h"
#include "reference/reference.h"

namespace ssmv::ref {
namespace {

constexpr int64_t kH = 4, kP = 64, kN = 128;

// Consumes every output (so none is optimised away) and keeps nothing.
class DiscardSink : public Sink {
 public:
  void token(const TokenOutputs& o) override {
    double s = 0;
    for (double v : o.y_nearest) s += v;
    sum_ += s;
  }
  void state(const StateOutputs& o) override { states_ += int64_t(o.value.size()); }
  double sum() const { return sum_.load(); }

 private:
  std::atomic<double> sum_{0};
  std::atomic<int64_t> states_{0};
};

double max_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

// Args: T, threads.
void Streaming(benchmark::State& state) {
  const int64_t T = state.range(0);
  const Problem pr = random_problem({0, T}, kH, kP, kN, 1, 2026, true);
  Options o;
  o.threads = int(state.range(1));
  for (auto _ : state) {
    DiscardSink sink;
    compute_streaming(pr, sink, o);
    benchmark::DoNotOptimize(sink.sum());
  }
  state.SetItemsProcessed(state.iterations() * T * kH * kP * kN);
  state.counters["maxrss_MiB"] = max_rss_mib();
}
BENCHMARK(Streaming)
    ->ArgNames({"T", "threads"})
    ->Args({256, 1})
    ->Args({256, 2})
    ->Args({4096, 2})
    ->Unit(benchmark::kSecond)
    ->UseRealTime()
    ->Iterations(1)
    ->Repetitions(3)
    ->ReportAggregatesOnly(true);

// compute() keeps every output (y [T, H, P] at 191 bits): memory grows with T.
void KeepAll(benchmark::State& state) {
  const int64_t T = state.range(0);
  const Problem pr = random_problem({0, T}, kH, kP, kN, 1, 2026, true);
  Options o;
  o.threads = int(state.range(1));
  for (auto _ : state) benchmark::DoNotOptimize(compute(pr, o).y.nearest.data());
  state.SetItemsProcessed(state.iterations() * T * kH * kP * kN);
  state.counters["maxrss_MiB"] = max_rss_mib();
}
BENCHMARK(KeepAll)
    ->ArgNames({"T", "threads"})
    ->Args({256, 2})
    ->Args({4096, 2})
    ->Unit(benchmark::kSecond)
    ->UseRealTime()
    ->Iterations(1);

}  // namespace
}  // namespace ssmv::ref

BENCHMARK_MAIN();
