// Reference throughput and memory (issue 2 item 7).
//
// One state update = one (p, n) element advanced by one token, its share of the output
// included, at the default precision (one 127-bit run with its a-priori error bound, a
// 191-bit retry only for values the bound cannot decide, +
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

#include <algorithm>
#include <atomic>
#include <cmath>
#include <vector>

#include "spec/format.h"
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
  size_t bytes = 0;
  for (const FormatValues* v : {&pr.x, &pr.dt, &pr.B, &pr.C, &pr.z}) bytes += v->size() * (v->holds_bits() ? 2 : 4);
  for (const std::vector<float>* v : {&pr.A, &pr.dt_bias, &pr.D, &pr.initial_state}) bytes += v->size() * sizeof(float);
  return double(bytes) / (1024.0 * 1024.0);
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
  o.tier = Tier::mpfr_only;  // the MPFR tier's own figures (issue 2 item 7)
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
  o.tier = Tier::mpfr_only;
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

// --- Tiers (issue 13 item 6): plain double, tiered, MPFR only, on one core and on all.
// Shape: one sequence of T tokens, H = 8, P = 64, N = 128 (the 1 × 1024 check is
// T = 1024: 6.7·10^7 updates). Data: 0 realistic; 1 cancellation (state dims paired, C of
// each pair opposite to a relative 2^-6, exact in bf16, D absent); 2 long memory (A = 0: decay 1).
constexpr int64_t kTierH = 8;

Problem tier_problem(int64_t T, int64_t data) {
  Problem pr = realistic_problem(Shape{{0, T}, kTierH, kP, kN, 1}, Formats{Format::bf16, Format::fp32, Format::bf16}, 2026);
  if (data == 1) {
    pr.B.loosen();  // edited below
    pr.C.loosen();
    for (int64_t t = 0; t < T; ++t) {
      for (int64_t n = 0; n + 1 < kN; n += 2) {
        const size_t i = size_t(pr.bc_index(t, 0, n));
        pr.B.set(i + 1, pr.B[i]);
        pr.C.set(i + 1, float(round_value(Format::bf16, -double(pr.C[i]) * (1 + 0x1p-6))));
      }
    }
    for (size_t i = 0; i + 1 < pr.initial_state.size(); i += 2) pr.initial_state[i + 1] = pr.initial_state[i];
    pr.D.clear();
  } else if (data == 2) {
    std::fill(pr.A.begin(), pr.A.end(), 0.0f);
  }
  return pr;
}

// The ceiling: the same recurrence in plain double (libm exp/log1p), no bound, no
// certification; y kept as compute() keeps its nearest doubles.
void plain_double(const Problem& pr, std::vector<double>& y) {
  const int64_t T = pr.shape.num_tokens(), H = pr.shape.H, P = pr.shape.P, N = pr.shape.N;
  std::vector<double> S(static_cast<size_t>(P * N)), u(static_cast<size_t>(N));
  y.assign(size_t(T * H * P), 0.0);
  for (int64_t h = 0; h < H; ++h) {
    for (int64_t i = 0; i < P * N; ++i) S[i] = pr.initial_state.empty() ? 0.0 : pr.initial_state[size_t(h * P * N + i)];
    for (int64_t t = 0; t < T; ++t) {
      double d = double(pr.dt[pr.dt_index(t, h)]) + (pr.has_dt_bias() ? double(pr.dt_bias[h]) : 0.0);
      if (pr.dt_softplus) d = std::log1p(std::exp(d));
      const double a = std::exp(d * double(pr.A[h]));
      for (int64_t n = 0; n < N; ++n) u[n] = d * double(pr.B[pr.bc_index(t, 0, n)]);
      for (int64_t p = 0; p < P; ++p) {
        const double x = double(pr.x[pr.x_index(t, h, p)]);
        double acc = double(pr.d_value(h, p)) * x;
        double* s = &S[size_t(p * N)];
        for (int64_t n = 0; n < N; ++n) {
          s[n] = a * s[n] + u[n] * x;
          acc += double(pr.C[pr.bc_index(t, 0, n)]) * s[n];
        }
        if (pr.has_z()) {
          const double z = double(pr.z[pr.x_index(t, h, p)]);
          acc *= z / (1 + std::exp(-z));
        }
        y[size_t(pr.x_index(t, h, p))] = acc;
      }
    }
  }
}

// Args: T, data, path (0 plain double, 1 tiered, 2 MPFR only), threads.
void Tiers(benchmark::State& state) {
  const int64_t T = state.range(0);
  const Problem pr = tier_problem(T, state.range(1));
  Options o;
  o.tier = state.range(2) == 2 ? Tier::mpfr_only : Tier::automatic;
  o.threads = int(state.range(3));
  TierCounts counts;
  std::vector<double> y;
  const double cpu0 = process_cpu_seconds();
  for (auto _ : state) {
    if (state.range(2) == 0) {
      plain_double(pr, y);
      benchmark::DoNotOptimize(y.data());
    } else {
      const ExactResult r = compute(pr, o);
      counts = r.tiers;
      benchmark::DoNotOptimize(r.y.nearest.data());
    }
  }
  const double updates = double(state.iterations() * T * kTierH * kP * kN);
  state.SetItemsProcessed(int64_t(updates));
  state.counters["per_core_updates_per_cpu_s"] = updates / (process_cpu_seconds() - cpu0);
  state.counters["mpfr_pairs"] = double(counts.mpfr_pairs);
  state.counters["fast_pairs"] = double(counts.fast_pairs);
  state.counters["maxrss_MiB"] = max_rss_mib();
}
BENCHMARK(Tiers)
    ->ArgNames({"T", "data", "path", "threads"})
    ->Args({1024, 0, 0, 1})
    ->Args({1024, 0, 1, 1})
    ->Args({1024, 0, 1, 2})
    ->Args({32, 0, 2, 1})
    ->Args({1024, 1, 0, 1})
    ->Args({1024, 1, 1, 2})
    ->Args({32, 1, 2, 1})
    ->Args({1024, 2, 0, 1})
    ->Args({1024, 2, 1, 2})
    ->Args({32, 2, 2, 1})
    ->Unit(benchmark::kSecond)
    ->UseRealTime()
    ->Iterations(1);

}  // namespace
}  // namespace ssmv::ref

BENCHMARK_MAIN();
