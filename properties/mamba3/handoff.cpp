#include "properties/mamba3/handoff.h"

#include <rapidcheck.h>

#include <algorithm>

#include "reference/mamba3/tests/test_problem.h"

namespace ssmv::prop::mamba3 {

using ssmv::mamba3::Problem;

std::string state_part_name(StatePart part) {
  switch (part) {
    case StatePart::none: return "none";
    case StatePart::angle: return "angle";
    case StatePart::S: return "S";
    case StatePart::B_prev: return "B_prev";
    case StatePart::x_prev: return "x_prev";
  }
  return "?";
}

void drop_part(ssmv::mamba3::FourPartState& state, StatePart part) {
  std::vector<float>* v = part == StatePart::angle    ? &state.angle
                          : part == StatePart::S      ? &state.S
                          : part == StatePart::B_prev ? &state.B_prev
                          : part == StatePart::x_prev ? &state.x_prev
                                                      : nullptr;
  if (v) std::fill(v->begin(), v->end(), 0.0f);
}

std::vector<int64_t> sequence_lengths(const Problem& p) {
  std::vector<int64_t> len;
  for (int64_t s = 0; s < p.shape.num_sequences(); ++s) len.push_back(p.shape.seq_len(s));
  return len;
}

std::vector<int64_t> draw_split(const Problem& p) {
  std::vector<int64_t> k;
  for (int64_t len : sequence_lengths(p)) {
    RC_PRE(len >= 2);
    k.push_back(*rc::gen::inRange<int64_t>(1, len));
  }
  return k;
}

Problem tokens(const Problem& p, const std::vector<int64_t>& begin, const std::vector<int64_t>& end) {
  return ref::mamba3::testing::slice(p, begin, end);
}

Outputs emulate_handed_off(const Problem& p, const std::vector<int64_t>& k, StatePart dropped,
                           const bound::mamba3::EmulationOptions& options) {
  const std::vector<int64_t> len = sequence_lengths(p), zero(len.size(), 0);
  const Problem first = tokens(p, zero, k);
  Problem second = tokens(p, k, len);
  const bound::mamba3::EmulatedSteps e1 = bound::mamba3::emulate_steps(first, options);
  second.initial = {e1.angle, e1.S, e1.B_prev, e1.x_prev};
  drop_part(second.initial, dropped);
  const bound::mamba3::EmulatedSteps e2 = bound::mamba3::emulate_steps(second, options);
  Outputs out = outputs_of(e2);
  const int64_t row = p.shape.H * p.shape.P;
  out.y.assign(p.x.size(), 0.0f);
  for (int64_t s = 0; s < p.shape.num_sequences(); ++s) {
    const int64_t to = p.shape.cu_seqlens[size_t(s)];
    std::copy_n(e1.y.begin() + first.shape.cu_seqlens[size_t(s)] * row, k[size_t(s)] * row, out.y.begin() + to * row);
    std::copy_n(e2.y.begin() + second.shape.cu_seqlens[size_t(s)] * row, (len[size_t(s)] - k[size_t(s)]) * row,
                out.y.begin() + (to + k[size_t(s)]) * row);
  }
  return out;
}

}  // namespace ssmv::prop::mamba3
