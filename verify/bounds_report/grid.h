// The grid `ssmv bounds` runs: contracts × input/state/output formats × shapes. The shapes
// are three sweeps through one base point (T0, N0, L0) rather than their full product:
// sequence length T over `lengths` at (N0, L0), state dim N over `state_dims` at (T0, L0),
// and — for chunked contracts — chunk size L over `chunk_sizes` at (T0, N0). Every problem
// is one sequence of T tokens, H heads in G groups, head dim P, Mamba2-realistic data
// (spec/realistic_problem.h: softplus with dt_bias, D per head, the gate z, an initial
// state) from one seed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "spec/problem.h"

namespace ssmv::verify {

struct BoundsGrid {
  std::vector<std::string> contracts;  // preset names or contract JSON files (verify/contracts)
  std::vector<int64_t> lengths, state_dims, chunk_sizes;
  int64_t base_length = 0, base_state_dim = 0, base_chunk_size = 0;  // T0, N0, L0
  int64_t heads = 0, head_dim = 0, groups = 0;                        // H, P, G
  std::vector<Format> input_formats, state_formats, output_formats;
  uint64_t seed = 0;
};

// The grid of docs/error-bounds.md: the bundled kernels' contracts (ssu, chunk_scan.production,
// chunk_scan.fp32) and the Triton presets (triton.ssu, triton.chunk_scan); T 64 … 8192, N 16 … 256,
// L 64 … 256, base (T0, N0, L0) = (1024, 128, 256); H = 4, P = 64, G = 2; bf16 inputs, fp32 state,
// bf16 and fp32 outputs.
BoundsGrid default_bounds_grid();
// A grid of seconds (the CI test): the same contracts, T 32 and 160, N 16 and 32, L 64,
// H = 2, P = 8, G = 1.
BoundsGrid quick_bounds_grid();

// The distinct (T, N) of the sweeps, in sweep order (T sweep, then N sweep), and for each the
// chunk sizes it is run at (L0, and every L of the chunk sweep at (T0, N0)).
struct GridProblem {
  int64_t T = 0, N = 0;
  std::vector<int64_t> chunk_sizes;
};
std::vector<GridProblem> grid_problems(const BoundsGrid& g);

// Checks the grid; throws std::invalid_argument naming the option (as `ssmv bounds` spells
// it) and the value: an empty list, a non-positive size, a base value not in its sweep, G not
// dividing H.
void validate_grid(const BoundsGrid& g);

// The problem of one (T, N) and formats: realistic_problem with the grid's H, P, G and seed.
Problem grid_problem(const BoundsGrid& g, int64_t T, int64_t N, const Formats& formats);

}  // namespace ssmv::verify
