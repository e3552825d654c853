// verify/json on safetensors headers: {"__metadata__": {...}, "t<i>": {"dtype": "F32",
// "shape": [2, 3], "data_offsets": [b, e]}, ...} with range(0) tensors. Reports bytes/s.
#include <benchmark/benchmark.h>

#include <string>

#include "verify/json/json.h"

namespace {

std::string header(int64_t tensors) {
  std::string t = R"({"__metadata__":{"format":"pt","ssmv.kernel":"chunk_scan"})";
  for (int64_t i = 0; i < tensors; ++i) {
    t += ",\"tensor_" + std::to_string(i) + R"(":{"dtype":"F32","shape":[2,3],"data_offsets":[)" +
         std::to_string(i * 24) + "," + std::to_string(i * 24 + 24) + "]}";
  }
  return t + "}";
}

void BM_Parse(benchmark::State& state) {
  const std::string text = header(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(ssmv::json::parse(text));
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(text.size()));
}

void BM_Dump(benchmark::State& state) {
  const ssmv::json::Value v = ssmv::json::parse(header(state.range(0)));
  size_t bytes = 0;
  for (auto _ : state) {
    const std::string text = ssmv::json::dump(v);
    bytes = text.size();
    benchmark::DoNotOptimize(text.data());
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(bytes));
}

BENCHMARK(BM_Parse)->Arg(10)->Arg(100000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Dump)->Arg(10)->Arg(100000)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
