// Reference throughput and memory (issue 2 item 7).
//
// One state update = one (p, n) element advanced by one token, its share of the output
// included, at the default precision (127-bit primary run + 191-bit certifying run +
// double magnitudes + the certification of every y and final state). Shape: one
// sequence, H = 4, P = 64, N = 128, Mamba2-like bf16 data with softplus, D and z.
// The streaming path keeps nothing per token, so peak memory must not grow with T:
// maxrss_MiB (getrusage, whole process, monotone) is reported per benchmark; run one
// benchmark per process (--benchmark_filter) to read a figure for one T. inputs_MiB is
// the size of the problem's own tensors, which do grow with T.
//
//   build-ref/bench/reference/reference_bench --benchmark_filter='Streaming/T:256/threads:1/boost:0'
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <atomic>

#include "spec/realistic_problem.h"
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

// The problem's own tensors (they grow with T; the reference's working set must not).
double input_mib(const Problem& pr) {
  size_t floats = 0;
  for (const auto* v : {&pr.x, &pr.dt, &pr.A, &pr.B, &pr.C, &pr.z, &pr.dt_bias, &pr.D, &pr.initial_state})
    floats += v->size();
  return double(floats * sizeof(float)) / (1024.0 * 1024.0);
}

// User + system CPU seconds of the whole process (all threads).
double process_cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * double(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

double max_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

// Args: T, threads, boost (0: raw mpfr_t, the default; 1: boost::multiprecision::mpfr_float).
void Streaming(benchmark::State& state) {
  const int64_t T = state.range(0);
  const Problem pr = realistic_problem(Shape{{0, T}, kH, kP, kN, 1}, Formats{Format::bf16, Format::fp32, Format::bf16}, 2026);
  Options o;
  o.threads = int(state.range(1));
  o.arithmetic = state.range(2) ? Arithmetic::boost_mpfr : Arithmetic::raw_mpfr;
  const double cpu0 = process_cpu_seconds();
  for (auto _ : state) {
    DiscardSink sink;
    compute_streaming(pr, sink, o);
    benchmark::DoNotOptimize(sink.sum());
  }
  const double updates = double(state.iterations() * T * kH * kP * kN);
  state.SetItemsProcessed(int64_t(updates));
  // Updates per CPU-second of all threads: the per-core rate, robust to other load on
  // the machine (items_per_second is per wall-clock second).
  state.counters["per_core_updates_per_cpu_s"] = updates / (process_cpu_seconds() - cpu0);
  state.counters["maxrss_MiB"] = max_rss_mib();
  state.counters["inputs_MiB"] = input_mib(pr);
}
BENCHMARK(Streaming)
    ->ArgNames({"T", "threads", "boost"})
    ->Args({256, 1, 0})
    ->Args({256, 2, 0})
    ->Args({4096, 2, 0})
    ->Args({256, 1, 1})
    ->Unit(benchmark::kSecond)
    ->UseRealTime()
    ->Iterations(1);

// compute() keeps every output (y [T, H, P] at 191 bits): memory grows with T.
void KeepAll(benchmark::State& state) {
  const int64_t T = state.range(0);
  const Problem pr = realistic_problem(Shape{{0, T}, kH, kP, kN, 1}, Formats{Format::bf16, Format::fp32, Format::bf16}, 2026);
  Options o;
  o.threads = int(state.range(1));
  for (auto _ : state) benchmark::DoNotOptimize(compute(pr, o).y.nearest.data());
  state.SetItemsProcessed(state.iterations() * T * kH * kP * kN);
  state.counters["maxrss_MiB"] = max_rss_mib();
  state.counters["inputs_MiB"] = input_mib(pr);
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
