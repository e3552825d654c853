#include "verify/handoff.h"

#include <string>

#include "verify/bound/chunked_bound.h"
#include "verify/bound/sequential_bound.h"
#include "verify/problem_slice.h"

namespace ssmv::verify {
namespace {

// The per-token values of `v` ([T, width]) over the tokens [cu[q] + begin[q], cu[q] + end[q])
// of the sequences q, in order: what the reference computed for the whole problem, cut to
// the tokens of a slice.
std::vector<double> slice_values(const Problem& p, const std::vector<double>& v, int64_t width,
                                 const std::vector<int64_t>& begin, const std::vector<int64_t>& end) {
  std::vector<double> out;
  for (int64_t q = 0; q < p.shape.num_sequences(); ++q) {
    const int64_t t0 = p.shape.cu_seqlens[q];
    out.insert(out.end(), v.begin() + (t0 + begin[q]) * width, v.begin() + (t0 + end[q]) * width);
  }
  return out;
}

}  // namespace

void validate_prefill(const Problem& p, const std::vector<int64_t>& prefill) {
  const int64_t S = p.shape.num_sequences();
  if (int64_t(prefill.size()) != S) {
    throw ProblemError("prefill_tokens: " + std::to_string(prefill.size()) + " entries for " + std::to_string(S) +
                       " sequences");
  }
  for (int64_t q = 0; q < S; ++q) {
    if (prefill[q] < 0 || prefill[q] > p.shape.seq_len(q)) {
      throw ProblemError("prefill_tokens[" + std::to_string(q) + "] = " + std::to_string(prefill[q]) +
                         " is outside [0, " + std::to_string(p.shape.seq_len(q)) + "], the length of sequence " +
                         std::to_string(q));
    }
  }
}

ref::Options handoff_reference_options(const Problem& p, const std::vector<int64_t>& prefill) {
  validate_prefill(p, prefill);
  ref::Options ro;
  for (int64_t q = 0; q < p.shape.num_sequences(); ++q) {
    if (prefill[q] > 0) ro.state_positions.push_back(p.shape.cu_seqlens[q] + prefill[q]);
  }
  return ro;
}

HandoffBounds handoff_bounds(const Problem& p, const std::vector<int64_t>& prefill, const Contract& chunked,
                             const Contract& decode, bool decode_stores_every_token, const ref::ExactResult& exact) {
  validate_prefill(p, prefill);
  const Shape& s = p.shape;
  const int64_t S = s.num_sequences(), H = s.H, P = s.P, per = H * P * s.N;
  const std::vector<int64_t> zero(S, 0);
  std::vector<int64_t> len(S);
  for (int64_t q = 0; q < S; ++q) len[q] = s.seq_len(q);

  HandoffBounds out;
  out.y.assign(s.num_tokens() * H * P, 0.0);
  out.final_state.assign(S * per, 0.0);
  std::vector<double> handed_error(S * per, 0.0);  // the stored state's error at each split

  // Prefill [0, prefill[q]): the chunked bound of the prefix problem.
  std::vector<int64_t> pre_kept;
  const Problem pre = slice_tokens(p, zero, prefill, &pre_kept);
  if (!pre_kept.empty()) {
    const std::vector<double> delta = slice_values(p, exact.delta, H, zero, prefill);
    const std::vector<double> y_exact = slice_values(p, exact.y.nearest, H * P, zero, prefill);
    const std::vector<double> y_ungated = slice_values(p, exact.y_ungated, H * P, zero, prefill);
    bound::ChunkedInput in;
    in.problem = &pre;
    in.contract = &chunked;
    in.delta = &delta;
    in.y_exact = &y_exact;
    in.y_ungated = &y_ungated;
    const bound::ChunkedBounds b = bound::chunked_bounds(in);
    int64_t t_pre = 0;
    for (size_t r = 0; r < pre_kept.size(); ++r) {
      const int64_t q = pre_kept[r];
      for (int64_t j = 0; j < prefill[q]; ++j, ++t_pre) {
        for (int64_t i = 0; i < H * P; ++i) out.y[(s.cu_seqlens[q] + j) * H * P + i] = b.y[t_pre * H * P + i];
      }
      for (int64_t i = 0; i < per; ++i) {
        handed_error[q * per + i] = b.final_state[int64_t(r) * per + i];
        out.final_state[q * per + i] = handed_error[q * per + i];
      }
    }
  }

  // Decode [prefill[q], len[q]): the sequential bound from the exact state at the split,
  // inheriting the prefill's error in the handed-over state.
  std::vector<int64_t> dec_kept;
  Problem dec = slice_tokens(p, prefill, len, &dec_kept);
  if (dec_kept.empty()) return out;
  dec.initial_state.clear();
  bound::SequentialInput in;
  in.problem = &dec;
  in.contract = &decode;
  in.store_every_token = decode_stores_every_token;
  const std::vector<double> delta = slice_values(p, exact.delta, H, prefill, len);
  const std::vector<double> decay = slice_values(p, exact.decay, H, prefill, len);
  in.delta = &delta;
  in.decay = &decay;
  // states_at holds one state per sequence with a prefix, in sequence order.
  std::vector<int64_t> state_at(S, -1);
  for (int64_t q = 0, k = 0; q < S; ++q) {
    if (prefill[q] > 0) state_at[q] = k++;
  }
  for (int64_t q : dec_kept) {
    for (int64_t i = 0; i < per; ++i) {
      const double start = state_at[q] >= 0 ? exact.states_at[state_at[q]].state.nearest[i]
                           : p.has_initial_state() ? double(p.initial_state[q * per + i]) : 0.0;
      in.initial_state.push_back(start);
      in.initial_error.push_back(handed_error[q * per + i]);
    }
  }
  const bound::SequentialBounds b = bound::sequential_bounds(in);
  int64_t t_dec = 0;
  for (size_t r = 0; r < dec_kept.size(); ++r) {
    const int64_t q = dec_kept[r];
    for (int64_t t = s.cu_seqlens[q] + prefill[q]; t < s.cu_seqlens[q + 1]; ++t, ++t_dec) {
      for (int64_t i = 0; i < H * P; ++i) out.y[t * H * P + i] = b.y[t_dec * H * P + i];
    }
    for (int64_t i = 0; i < per; ++i) out.final_state[q * per + i] = b.stored_state[int64_t(r) * per + i];
  }
  return out;
}

}  // namespace ssmv::verify
