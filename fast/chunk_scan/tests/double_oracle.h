// The recurrence of DESIGN.md §2 evaluated token by token in double, with the magnitudes
// a first-order bound needs, and the provisional bound of the CPU tests (see
// provisional_bound.cpp). Stands in for ssmv::ref::compute (reference/reference.h) until
// the certified reference is built: double carries 53 bits, so its own error (≈ 2^-50
// relative to the magnitudes below over these short problems) is ~2^-26 of any bound used.
#pragma once

#include <cstdint>
#include <vector>

#include "fast/chunk_scan/chunk_scan.h"
#include "spec/problem.h"

namespace ssmv::chunk_scan::testing {

struct DoubleResult {
  std::vector<double> y;           // [T, H, P]
  std::vector<double> y_mag;       // [T, H, P] |zσ(z)|·(Σ_n |C_n|·Sabs_n + |D·x|)
  std::vector<double> final_state; // [S, H, P, N]
  std::vector<double> final_mag;   // [S, H, P, N] Sabs
  std::vector<double> boundary;    // [num_chunks, H, P, N] state after each chunk
  std::vector<double> boundary_mag;
  std::vector<double> delta;       // [T, H] δ after softplus and clamp
  std::vector<double> delta_abs_err;  // [T, H] bound on |δ̂ − δ| of an fp32 evaluation
};

DoubleResult run_double(const Problem& p, const ChunkPlan& plan);

// Per-element provisional bounds for an evaluation of the chunked algorithm under a
// chunk_scan contract (derivation in provisional_bound.cpp).
struct Bounds {
  std::vector<double> y, final_state, boundary;
};
Bounds provisional_bounds(const Problem& p, const ChunkPlan& plan, const DoubleResult& d,
                          ContractKind contract);

}  // namespace ssmv::chunk_scan::testing
