// A judged tensor's layout: its coordinates' names, its dims in the dump, and the coordinates
// of a flat (row-major) index. The judge (TensorJudge, judge_tensor), the reports and the
// side-by-side comparison read a tensor's shape only through this, so a recurrence family
// brings its tensors' layouts and the judging code stays as it is (docs/design.md, "Families").
// Mamba2's layouts are the two functions below.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "spec/problem.h"

namespace ssmv::verify {

struct TensorLayout {
  std::vector<std::string> coord_names;
  std::vector<int64_t> dims;  // the tensor's shape in the dump ({elements} when it has none)
  std::function<std::vector<int64_t>(int64_t index)> coords;
};

// Mamba2's flat indices to named coordinates: y [T, H, P] to (sequence, token in its
// sequence, head, dim); a state tensor [F, H, P, N] to (first, head, dim, state).
std::vector<int64_t> y_coords(const Problem& p, int64_t index);
std::vector<int64_t> state_coords(const Problem& p, int64_t index);
// y's coordinate names, for TensorReport::coord_names: sequence, token, head, dim.
extern const std::vector<std::string> kYCoordNames;

// Mamba2's y [T, H, P] of packed sequences: (sequence, token in its sequence, head, dim).
// The layout reads `p`, which must outlive it.
TensorLayout y_layout(const Problem& p);

// Mamba2's state tensors [F, H, P, N] of `elements` elements: (first, head, dim, state), where
// `first` names the leading coordinate: "sequence" for final states, "slot" over a decode
// pool, "chunk" over chunk boundaries. The layout reads `p`, which must outlive it.
TensorLayout state_layout(const Problem& p, int64_t elements, const std::string& first = "sequence");

}  // namespace ssmv::verify
