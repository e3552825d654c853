// Fixtures of the report, side-by-side and assertion tests: a small realistic problem and
// KernelChecks of chunk_scan's host twin on it — honest, and with planted errors.
#pragma once

#include <cstdint>
#include <vector>

#include "reference/reference.h"
#include "verify/run/kernel_check.h"
#include "spec/realistic_problem.h"
#include "verify/judge/verdict.h"

namespace ssmv::verify::testing {

// Two sequences (40 and 30 tokens), H = 2, P = 4, N = 16, G = 1; bf16 in and out, fp32
// state; softplus, bias, D per head, z and initial states. Small enough for the certified
// reference in milliseconds.
inline Problem small_problem(uint64_t seed = 7) {
  const Shape s{{0, 40, 70}, 2, 4, 16, 1};  // cu_seqlens, H, P, N, G
  return realistic_problem(s, Formats{}, seed);
}

// chunk_scan.production, chunk size 64, on the host twin.
inline KernelCheck chunk_scan_check(const Problem& p) {
  return check_chunk_scan(p, chunk_scan::ContractKind::production, 64, Device::twin);
}

// Element `index` of y replaced by `bits` (output format), e.g. poison_bits for an
// unwritten element.
struct Plant {
  int64_t index;
  Bits bits;
};

// `honest` (chunk_scan_check(p)) with `plants` in y, y judged again against the exact
// values with the same per-element bounds; the other tensors as they were.
inline KernelCheck planted_check(const Problem& p, const KernelCheck& honest, const std::vector<Plant>& plants) {
  const ref::ExactResult exact = ref::compute(p);
  const TensorReport& y = honest.tensors.at(0);
  std::vector<Bits> bits = y.computed;
  for (const Plant& pl : plants) bits.at(size_t(pl.index)) = pl.bits;
  KernelCheck kc = honest;
  kc.tensors[0] = judge_tensor("y", y.format, bits, exact.y, y.bounds, y_layout(p));
  return kc;
}

// y[index] + 1 in the output format: far beyond a bf16 bound at realistic magnitudes.
inline Bits plus_one(const KernelCheck& honest, int64_t index) {
  const TensorReport& y = honest.tensors[0];
  return round_nearest_even(y.format, decode(y.format, y.computed[size_t(index)]) + 1.0);
}

}  // namespace ssmv::verify::testing
