// Where one element's bound comes from: its parts per BoundSource (verify/bound/source.h),
// as shares of the bound, largest first. Every term of the bounds belongs to exactly one
// source (a term that carries an earlier error, such as (a + Δa)·E, scales that error's
// parts), so the parts sum to the element's bound up to the double rounding of the sums
// (relative ~1e-15): an exact split of the first-order bound, not a linearisation. Only
// the element's sequence, head and dim are evaluated (chunked y: only its token's row):
// the cost of one head. docs/bounds.md §5.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "verify/bound/chunked_bound.h"
#include "verify/bound/sequential_bound.h"
#include "verify/bound/source.h"

namespace ssmv::bound {

struct SourceShare {
  BoundSource source;
  std::string label;  // the source's name with what it is here: "decayed_CB (bf16)", "sum:y (mma_m16n8k16)"
  double value = 0;   // its part of the bound (same unit as the bound)
  double share = 0;   // value / bound
};

struct Attribution {
  double bound = 0;                 // the sum of the parts: the element's bound
  std::vector<SourceShare> shares;  // nonzero parts only, largest first; shares sum to 1
};

// `which` and `index` name the element (BoundOf, flat index in its tensor's layout).
// Throws std::invalid_argument as the bounds do, and for a BoundOf the family does not
// have or an index outside the tensor. y_element: a y element's own y when `in` holds no y
// vectors (a streamed check, verify/judge/external_check.cpp); null: read from in's vectors.
Attribution attribute_sequential(const SequentialInput& in, BoundOf which, int64_t index,
                                 const YElement* y_element = nullptr);
Attribution attribute_chunked(const ChunkedInput& in, BoundOf which, int64_t index);

// The label of `s` under contract `c` for problem formats `f`: rounding points carry their
// format, sums their order ("not declared: sequential_fma" when the contract lists none),
// arithmetic the accumulation format.
std::string source_label(BoundSource s, const Contract& c, const Formats& f);

}  // namespace ssmv::bound
