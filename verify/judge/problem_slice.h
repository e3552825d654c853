// Cutting a problem along its token axis: the tokens [begin[s], end[s]) of each sequence s
// (positions relative to the sequence's start), with every per-token tensor sliced and the
// per-head parameters kept. Used by the prefill/decode hand-off check.
#pragma once

#include <vector>

#include "spec/problem.h"

namespace ssmv::verify {

// Sequences whose slice is empty are dropped; `kept` (optional) receives the indices of the
// sequences kept. The initial states are kept when every kept slice starts at 0 and
// dropped otherwise (the caller supplies the handed-over state).
Problem slice_tokens(const Problem& p, const std::vector<int64_t>& begin,
                     const std::vector<int64_t>& end, std::vector<int64_t>* kept = nullptr);

}  // namespace ssmv::verify
