// Checks before any SSU launch (GPU or twin): every precondition, with the offending field
// and value in the message. Nothing is launched and nothing written when one fails.
#pragma once

#include <cstdint>
#include <vector>

#include "fast/ssu/params.h"
#include "spec/problem.h"

namespace ssmv::ssu {

// Shapes, formats, pointers, alignment, strides and grid limits of `p` (the index arrays
// are not dereferenced: on a GPU launch they are device memory). Throws ProblemError.
void check_params(const Params& p);

// Host copies of the index arrays a Params points to, for check_indices.
struct IndexArrays {
  std::vector<int32_t> cu_seqlens;         // [R+1]
  std::vector<int32_t> slot_in;            // [R]
  std::vector<int32_t> slot_out;           // [R] or empty
  std::vector<int32_t> token_state_slots;  // [T_total] or empty
};

// Contents of the index arrays: cu_seqlens from 0, non-decreasing, ending at num_tokens;
// slots in range or the pad id; no slot written twice (final and per-token states
// together); no slot written by one request and read by another. Throws ProblemError.
void check_indices(const Params& p, const IndexArrays& idx);

}  // namespace ssmv::ssu
