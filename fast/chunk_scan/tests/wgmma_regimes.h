// The operand regimes of the wgmma accumulation measurement (wgmma_dump, wgmma_gpu_test;
// docs/design.md §4.1) and their comparison with the tensor-core model of mma_model.h.
// Each regime fixes the instruction's form (input format, N, K = chained k16 steps, A from
// shared memory or registers, scale-d) and an operand generator with a fixed seed, so that
// a dump of the device's results is checked by regenerating its operands.
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "fast/chunk_scan/tests/tensor_core_operands.h"
#include "fast/chunk_scan/tests/wgmma_probe.h"
#include "spec/format.h"

namespace ssmv::chunk_scan::testing {

struct WgmmaRegime {
  std::string name;
  Format format;     // bf16 or fp16 operands
  WgmmaShape shape;  // n, k, A from registers, scale-d
  int tiles;         // in the dump; the GPU test runs a quarter of them
  std::function<Operands(int tiles)> make;
};

// GoogleTest prints a parameter with this (the regime's name, not the struct's bytes).
inline void PrintTo(const WgmmaRegime& r, std::ostream* os) { *os << r.name; }

// Every regime, in dump order: layout checks on exact integer sums, the random regimes of
// mma_dump (normal sums, tiny sums near and in fp32's subnormal range, subnormal c, the
// targeted set), fp16 with normal and subnormal operands, bf16 subnormal operands, a wide
// exponent spread, cancellation, signed zeros; then chains of k16 steps, scale-d = 0,
// A from registers and N = 64; last B MN-major (imm-trans-b = 1, the form of x in the wgmma
// stage (e), removed since).
std::vector<WgmmaRegime> wgmma_regimes();

struct RegimeCount {
  int64_t outputs = 0;
  int64_t subnormal = 0;       // results in fp32's subnormal range (non-zero, below 2^-126)
  int64_t zeros = 0;           // results ±0
  int64_t differ = 0;          // bit patterns that differ from the model (mma_chain)
  int64_t differ_k8 = 0;       // ... from the hypothesis "each k16 step is two k8 steps"
  std::vector<std::string> first;  // the first few differences from the model, described
};

// Compares the device's results d (layout [tiles, 64, N]) with mma_chain over the regime's
// k16 steps (c taken as +0 where scale-d = 0), bit for bit.
RegimeCount compare_with_model(const WgmmaRegime& r, const Operands& o, const std::vector<float>& d, int tiles);

}  // namespace ssmv::chunk_scan::testing
