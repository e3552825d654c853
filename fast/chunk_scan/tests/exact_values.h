// The exact values the CPU tests compare the twin with — the certified MPFR reference
// (ssmv::ref::compute, states at every chunk boundary), as nearest doubles with the
// magnitudes a first-order bound needs — and the provisional bound of those tests (see
// provisional_bound.cpp). Nearest doubles carry 2^-53 relative error, ~2^-26 of any bound
// used here.
#pragma once

#include <cstdint>
#include <vector>

#include "fast/chunk_scan/chunk_scan.h"
#include "spec/problem.h"

namespace ssmv::chunk_scan::testing {

struct ExactDoubles {
  std::vector<double> y;           // [T, H, P]
  std::vector<double> y_mag;       // [T, H, P] |zσ(z)|·(Σ_n |C_n|·Sabs_n + |D·x|)
  std::vector<double> final_state; // [S, H, P, N]
  std::vector<double> final_mag;   // [S, H, P, N] Sabs
  std::vector<double> boundary;    // [num_chunks, H, P, N] state after each chunk
  std::vector<double> boundary_mag;
  std::vector<double> delta;       // [T, H] δ after softplus and clamp (exact, nearest double)
  std::vector<double> delta_abs_err;  // [T, H] bound on |δ̂ − δ| of an fp32 evaluation
};

ExactDoubles exact_values(const Problem& p, const ChunkPlan& plan);

// Per-element provisional bounds for an evaluation of the chunked algorithm under a
// chunk_scan contract (derivation in provisional_bound.cpp).
struct Bounds {
  std::vector<double> y, final_state, boundary;
};
Bounds provisional_bounds(const Problem& p, const ChunkPlan& plan, const ExactDoubles& d,
                          ContractKind contract);

}  // namespace ssmv::chunk_scan::testing
