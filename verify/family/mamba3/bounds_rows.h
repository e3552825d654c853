// `ssmv bounds` rows of Mamba-3 SISO's presets (Family::bounds_rows, verify/family/family.h): one
// problem of the grid drawn like upstream's test (spec/mamba3/random_problem.h), its certified values
// (certified_trace.h, run once for every row of the problem), and per contract — the step kernel's
// once, the prefill's at each chunk size — and output format, the bounds (verify/bound/mamba3/
// step_bound.h, prefill_bound.h) of y, final_angle_state, final_state and final_B_prev element by
// element beside the exact values; the host emulation's usage (error ÷ bound, the check's judging)
// where the contract is a host one. final_x_prev is left out: the last token's bf16 x stored in the
// fp32 state is exact (bound 0). Pairs (sequence, head) run on ref::default_threads() workers.
#pragma once

#include <string>
#include <vector>

#include "verify/family/family.h"

namespace ssmv::family::mamba3 {

// `contracts`: Mamba-3 presets (contracts.h); anything else is a cli::UsageError. Throws
// std::invalid_argument where a contract cannot bound the problem, and what the reference throws.
BoundsRows bounds_rows(const std::vector<std::string>& contracts, const BoundsProblem& problem);

}  // namespace ssmv::family::mamba3
