// Fixtures of the report, side-by-side and assertion tests: a small realistic problem and
// KernelChecks of chunk_scan's host twin on it — honest, and with planted errors.
#pragma once

#include <cstdint>
#include <vector>

#include "fast/chunk_scan/twin.h"
#include "reference/reference.h"
#include "verify/bound/chunked_bound.h"
#include "verify/kernel_check.h"
#include "verify/realistic_problem.h"
#include "verify/verdict.h"

namespace ssmv::verify::testing {

// Two sequences (40 and 30 tokens), H = 2, P = 4, N = 16, G = 1; bf16 in and out, fp32
// state; softplus, bias, D per head, z and initial states. Small enough for the certified
// reference in milliseconds.
inline Problem small_problem(uint64_t seed = 7) {
  Shape s;
  s.cu_seqlens = {0, 40, 70};
  s.H = 2;
  s.P = 4;
  s.N = 16;
  s.G = 1;
  return realistic_problem(s, Formats{}, seed);
}

// Where errors are planted in y: element `index` is replaced by `value` (bits in the output
// format), e.g. poison_bits for an unwritten element.
struct Plant {
  int64_t index;
  Bits bits;
};

// chunk_scan.production (chunk 64) on the host twin, judged as check_chunk_scan judges it,
// after planting `plants` into y.
inline KernelCheck planted_chunk_scan_check(const Problem& p, const std::vector<Plant>& plants) {
  const Contract contract = chunk_scan::contract(chunk_scan::ContractKind::production, 64);
  chunk_scan::Config cfg;
  cfg.chunk_size = 64;
  const ref::ExactResult exact = ref::compute(p);
  const chunk_scan::Result got = chunk_scan::run_twin(p, cfg);
  bound::ChunkedInput in;
  in.problem = &p;
  in.contract = &contract;
  in.delta = &exact.delta;
  in.y_exact = &exact.y.nearest;
  in.y_ungated = &exact.y_ungated;
  const bound::ChunkedBounds b = bound::chunked_bounds(in);
  const Format out = p.formats.output;
  std::vector<Bits> y(got.y.size());
  for (size_t i = 0; i < y.size(); ++i) y[i] = round_nearest_even(out, got.y[i]);
  for (const Plant& pl : plants) y[size_t(pl.index)] = pl.bits;
  KernelCheck kc{"chunk_scan", contract.name, "twin", {}};
  kc.tensors.push_back(judge_tensor("y", out, y, exact.y, b.y, p, y_coords, {"sequence", "token", "head", "dim"}));
  std::vector<Bits> st(got.final_state.size());
  for (size_t i = 0; i < st.size(); ++i) st[i] = round_nearest_even(p.formats.state, got.final_state[i]);
  kc.tensors.push_back(judge_tensor("final_state", p.formats.state, st, exact.final_state, b.final_state, p,
                                    state_coords, {"sequence", "head", "dim", "state"}));
  return kc;
}

// y[index] + 1 in the output format: far beyond a bf16 bound at realistic magnitudes.
inline Bits plus_one(const KernelCheck& honest, int64_t index) {
  const TensorReport& y = honest.tensors[0];
  return round_nearest_even(y.format, decode(y.format, y.computed[size_t(index)]) + 1.0);
}

}  // namespace ssmv::verify::testing
