// The hand-off of the four-part decode state (angle, S, B_prev, x_prev) from one call of the
// step kernel's emulation to the next: tokens [0, k_s) of each sequence s in one call, then
// [k_s, len_s) in another that starts from the state the first returned — optionally with one
// part of it dropped (zeroed), the planted "hand-off state dropped" bugs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "properties/mamba3/step_check.h"
#include "spec/mamba3/problem.h"

namespace ssmv::prop::mamba3 {

enum class StatePart { none, angle, S, B_prev, x_prev };
std::string state_part_name(StatePart part);
// Zeroes `part` of `state` (none: nothing), as a caller that forgets to hand it over.
void drop_part(ssmv::mamba3::FourPartState& state, StatePart part);

// Split points k_s in [1, len_s − 1] per sequence (every sequence needs 2 tokens), each
// shrinking toward 1.
std::vector<int64_t> draw_split(const ssmv::mamba3::Problem& p);

// Tokens [begin_s, end_s) of every sequence (reference/mamba3/tests/test_problem.h slice).
ssmv::mamba3::Problem tokens(const ssmv::mamba3::Problem& p, const std::vector<int64_t>& begin,
                             const std::vector<int64_t>& end);
std::vector<int64_t> sequence_lengths(const ssmv::mamba3::Problem& p);

// The emulation over [0, k) and then over [k, len) from the returned state with `dropped`
// zeroed, as the outputs of one run over the whole problem (y in token order, the second
// call's final state).
Outputs emulate_handed_off(const ssmv::mamba3::Problem& p, const std::vector<int64_t>& k, StatePart dropped,
                           const bound::mamba3::EmulationOptions& options = {});

}  // namespace ssmv::prop::mamba3
