// The double product of spec/rows_product.h (the chunked bound's stages and the sharp runs'
// sums, 15–17 % of a chunked `ssmv check`'s CPU) on the check's shapes, at every vector width
// this CPU runs: per_term = time / (rows·K·cols).
//   build/release/bench/check/rows_product_bench --benchmark_repetitions=5
//       --benchmark_report_aggregates_only=true   (one command line)
// Shapes (rows × K × cols): 4 × 256 × 64 and 4 × 64 × 64 (the sharp runs' intra-chunk blocks of
// four rows, late and early in a chunk), 64 × 256 × 128 (a chunk state), 256 × 128 × 64 (the
// inter-chunk sums). Figures: bench/NOTES.md.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "spec/rows_product.h"

namespace ssmv {
namespace {

std::vector<double> values(int64_t n, double salt) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[size_t(i)] = std::sin(double(i) * 1.3 + salt);
  return v;
}

bool runs_here(int lanes) {
  const std::vector<int> here = rows_product_lanes_here();
  return std::find(here.begin(), here.end(), lanes) != here.end();
}

void BM_RowsProduct(benchmark::State& state) {
  const int lanes = int(state.range(0));
  const int64_t rows = state.range(1), K = state.range(2), cols = state.range(3);
  if (!runs_here(lanes)) {
    state.SkipWithError("this CPU lacks the vector width");
    return;
  }
  const std::vector<double> a = values(rows * K, 0.5), b = values(K * cols, 1.5);
  std::vector<double> out(size_t(rows * cols));
  const Product<double, double, double> p{rows, K, cols, a.data(), K, b.data(), cols, out.data(), cols, true};
  for (auto _ : state) {
    rows_product_in_lanes(lanes, p);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  // Seconds per term (printed with an SI prefix: 88p is 0.088 ns).
  state.counters["per_term"] = benchmark::Counter(double(rows * K * cols),
                                                  benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_RowsProduct)
    ->ArgNames({"lanes", "rows", "K", "cols"})
    ->ArgsProduct({{8, 4, 2}, {4}, {256, 64}, {64}})
    ->Args({8, 64, 256, 128})
    ->Args({8, 256, 128, 64});

}  // namespace
}  // namespace ssmv

BENCHMARK_MAIN();
