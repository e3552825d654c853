#include "verify/judge/handoff.h"

#include <algorithm>
#include <string>

#include "verify/bound/chunked_bound.h"
#include "verify/bound/sequential_bound.h"
#include "verify/judge/problem_slice.h"

namespace ssmv::verify {
namespace {

// The per-token values of `v` ([T, width], a vector or a TokenHeadColumn of width H) over the
// tokens [cu[q] + begin[q], cu[q] + end[q]) of the sequences q, in order: what the reference
// computed for the whole problem, cut to the tokens of a slice.
template <class Values>
std::vector<double> slice_values(const Problem& p, const Values& v, int64_t width, const std::vector<int64_t>& begin,
                                 const std::vector<int64_t>& end) {
  std::vector<double> out;
  for (int64_t q = 0; q < p.shape.num_sequences(); ++q) {
    const int64_t t0 = p.shape.cu_seqlens[q];
    for (int64_t k = (t0 + begin[q]) * width; k < (t0 + end[q]) * width; ++k) out.push_back(v[size_t(k)]);
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

namespace {

// The two parts of a hand-off as bound inputs: the prefix problem under the chunked
// contract and the decode problem under the sequential one, with the slices of the exact
// values they read. Built once; bounds() and the attributions read it.
class HandoffParts {
 public:
  HandoffParts(const Problem& p, const std::vector<int64_t>& prefill, const Contract& chunked, const Contract& decode,
               bool stores_every_token, const ref::ExactResult& exact)
      : p_(p), prefill_(prefill) {
    validate_prefill(p, prefill);
    // pre_in_ and dec_in_ point into this object: never copied (see the deleted copy below).
    const Shape& s = p.shape;
    const int64_t S = s.num_sequences(), H = s.H, P = s.P;
    per_ = H * P * s.N;
    const std::vector<int64_t> zero(S, 0);
    std::vector<int64_t> len(S);
    for (int64_t q = 0; q < S; ++q) len[q] = s.seq_len(q);
    handed_error_.assign(S * per_, 0.0);

    // Prefill [0, prefill[q]): the chunked bound of the prefix problem.
    pre_ = slice_tokens(p, zero, prefill, &pre_kept_);
    pre_delta_ = slice_values(p, exact.delta, H, zero, prefill);
    pre_y_ = slice_values(p, exact.y.nearest, H * P, zero, prefill);
    pre_y_ungated_ = slice_values(p, exact.y_ungated, H * P, zero, prefill);
    pre_y_error_ = slice_values(p, exact.y.certified_error, H * P, zero, prefill);
    pre_in_.problem = &pre_;
    pre_in_.contract = &chunked;
    pre_in_.delta = &pre_delta_;
    pre_in_.y_exact = &pre_y_;
    pre_in_.y_ungated = &pre_y_ungated_;
    pre_in_.y_certified_error = &pre_y_error_;
    pre_in_.threads = ref::default_threads();
    pre_in_.boundary_states = false;  // the hand-off judges y and the states handed over and final
    if (!pre_kept_.empty()) pre_bounds_ = bound::chunked_bounds(pre_in_);
    for (size_t r = 0; r < pre_kept_.size(); ++r) {
      const int64_t q = pre_kept_[r];
      std::copy_n(pre_bounds_.final_state.begin() + int64_t(r) * per_, per_, handed_error_.begin() + q * per_);
    }

    // Decode [prefill[q], len[q]): the sequential bound from the exact state at the split,
    // inheriting the prefill's error in the handed-over state.
    dec_ = slice_tokens(p, prefill, len, &dec_kept_);
    dec_.initial_state.clear();
    dec_delta_ = slice_values(p, exact.delta, H, prefill, len);
    dec_decay_ = slice_values(p, exact.decay, H, prefill, len);
    dec_y_ = slice_values(p, exact.y.nearest, H * P, prefill, len);
    dec_y_ungated_ = slice_values(p, exact.y_ungated, H * P, prefill, len);
    dec_y_error_ = slice_values(p, exact.y.certified_error, H * P, prefill, len);
    dec_in_.problem = &dec_;
    dec_in_.contract = &decode;
    dec_in_.tokens_per_launch = stores_every_token ? 1 : 0;
    dec_in_.delta = &dec_delta_;
    dec_in_.decay = &dec_decay_;
    dec_in_.y_exact = &dec_y_;
    dec_in_.y_ungated = &dec_y_ungated_;
    dec_in_.y_certified_error = &dec_y_error_;
    dec_in_.threads = ref::default_threads();
    std::vector<int64_t> state_at(S, -1);  // states_at: one per sequence with a prefix, in order
    for (int64_t q = 0, k = 0; q < S; ++q) {
      if (prefill[q] > 0) state_at[q] = k++;
    }
    for (int64_t q : dec_kept_) {
      for (int64_t i = 0; i < per_; ++i) {
        const double start = state_at[q] >= 0 ? exact.states_at[state_at[q]].state.nearest[i]
                             : p.has_initial_state() ? double(p.initial_state[q * per_ + i]) : 0.0;
        dec_in_.initial_state.push_back(start);
        dec_in_.initial_error.push_back(handed_error_[q * per_ + i]);
      }
    }
  }

  HandoffParts(const HandoffParts&) = delete;
  HandoffParts& operator=(const HandoffParts&) = delete;

  HandoffBounds bounds() const {
    const Shape& s = p_.shape;
    const int64_t HP = s.H * s.P;
    HandoffBounds out;
    out.y.assign(s.num_tokens() * HP, 0.0);
    out.final_state = handed_error_;
    int64_t t_pre = 0;
    for (const int64_t q : pre_kept_) {
      for (int64_t j = 0; j < prefill_[q]; ++j, ++t_pre) {
        std::copy_n(pre_bounds_.y.begin() + t_pre * HP, HP, out.y.begin() + (s.cu_seqlens[q] + j) * HP);
      }
    }
    if (dec_kept_.empty()) return out;
    const bound::SequentialBounds b = bound::sequential_bounds(dec_in_);
    int64_t t_dec = 0;
    for (size_t r = 0; r < dec_kept_.size(); ++r) {
      const int64_t q = dec_kept_[r];
      for (int64_t t = s.cu_seqlens[q] + prefill_[q]; t < s.cu_seqlens[q + 1]; ++t, ++t_dec) {
        std::copy_n(b.y.begin() + t_dec * HP, HP, out.y.begin() + t * HP);
      }
      std::copy_n(b.stored_state.begin() + int64_t(r) * per_, per_, out.final_state.begin() + q * per_);
    }
    return out;
  }

  bound::Attribution attribute(bool is_y, int64_t index) const {
    const Shape& s = p_.shape;
    const int64_t HP = s.H * s.P;
    if (is_y) {
      const int64_t t = index / HP, q = sequence_of(t), j = t - s.cu_seqlens[q];
      if (j < prefill_[q]) {
        return bound::attribute_chunked(pre_in_, bound::BoundOf::y, (part_start(pre_kept_, q, prefill_, true) + j) * HP + index % HP);
      }
      return bound::attribute_sequential(dec_in_, bound::BoundOf::y,
                                         (part_start(dec_kept_, q, prefill_, false) + j - prefill_[q]) * HP + index % HP);
    }
    const int64_t q = index / per_;
    const auto rank = [&](const std::vector<int64_t>& kept) {
      return int64_t(std::find(kept.begin(), kept.end(), q) - kept.begin());
    };
    if (prefill_[q] < s.seq_len(q)) {
      return bound::attribute_sequential(dec_in_, bound::BoundOf::stored_state, rank(dec_kept_) * per_ + index % per_);
    }
    return bound::attribute_chunked(pre_in_, bound::BoundOf::final_state, rank(pre_kept_) * per_ + index % per_);
  }

 private:
  int64_t sequence_of(int64_t t) const {
    const std::vector<int64_t>& cu = p_.shape.cu_seqlens;
    return int64_t(std::upper_bound(cu.begin(), cu.end(), t) - cu.begin()) - 1;
  }
  // The first token of sequence q in a part's packed axis: the tokens of the sequences kept
  // before it (prefix part: prefill[r] each; decode part: len − prefill each).
  int64_t part_start(const std::vector<int64_t>& kept, int64_t q, const std::vector<int64_t>& prefill, bool prefix) const {
    int64_t start = 0;
    for (const int64_t r : kept) {
      if (r == q) break;
      start += prefix ? prefill[r] : p_.shape.seq_len(r) - prefill[r];
    }
    return start;
  }

  const Problem& p_;
  const std::vector<int64_t>& prefill_;
  int64_t per_ = 0;
  std::vector<double> handed_error_;  // [S, H, P, N] the stored state's error at each split
  Problem pre_, dec_;
  std::vector<int64_t> pre_kept_, dec_kept_;
  std::vector<double> pre_delta_, pre_y_, pre_y_ungated_, pre_y_error_, dec_delta_, dec_decay_, dec_y_, dec_y_ungated_,
      dec_y_error_;
  bound::ChunkedInput pre_in_;
  bound::SequentialInput dec_in_;
  bound::ChunkedBounds pre_bounds_;
};

}  // namespace


HandoffStream::HandoffStream(const Problem& p, const std::vector<int64_t>& prefill, const Contract& chunked,
                             const Contract& decode, bool decode_stores_every_token, const TokenHeadColumn& delta,
                             const TokenHeadColumn& decay)
    : p_(p), prefill_(prefill) {
  validate_prefill(p, prefill);
  const Shape& s = p.shape;
  const int64_t S = s.num_sequences(), H = s.H;
  per_ = H * s.P * s.N;
  const std::vector<int64_t> zero(S, 0);
  std::vector<int64_t> len(S);
  for (int64_t q = 0; q < S; ++q) len[q] = s.seq_len(q);
  handed_error_.assign(S * per_, 0.0);
  pre_rank_.assign(S, -1);
  dec_rank_.assign(S, -1);
  pre_start_.assign(S, 0);
  dec_start_.assign(S, 0);

  // Prefill [0, prefill[q]): the chunked bound of the prefix problem, streamed (no y vectors).
  pre_ = slice_tokens(p, zero, prefill, &pre_kept_);
  pre_delta_ = slice_values(p, delta, H, zero, prefill);
  pre_in_.problem = &pre_;
  pre_in_.contract = &chunked;
  pre_in_.delta = &pre_delta_;
  pre_in_.threads = ref::default_threads();
  pre_in_.boundary_states = false;  // the hand-off judges y and the states handed over and final
  if (!pre_kept_.empty()) pre_bounds_ = bound::chunked_bounds(pre_in_);
  finish_ = std::make_unique<bound::ChunkedYBound>(pre_in_);
  int64_t start = 0;
  for (size_t r = 0; r < pre_kept_.size(); ++r) {
    const int64_t q = pre_kept_[r];
    pre_rank_[q] = int64_t(r);
    pre_start_[q] = start;
    start += prefill[q];
    std::copy_n(pre_bounds_.final_state.begin() + int64_t(r) * per_, per_, handed_error_.begin() + q * per_);
  }

  // Decode [prefill[q], len[q]): the sequential bound from the exact state at the split (set
  // by set_split_state as the reference hands it over), inheriting the prefix's error in the
  // handed-over state; a sequence without a prefix starts from its initial state.
  dec_ = slice_tokens(p, prefill, len, &dec_kept_);
  dec_.initial_state.clear();
  dec_delta_ = slice_values(p, delta, H, prefill, len);
  dec_decay_ = slice_values(p, decay, H, prefill, len);
  dec_in_.problem = &dec_;
  dec_in_.contract = &decode;
  dec_in_.tokens_per_launch = decode_stores_every_token ? 1 : 0;
  dec_in_.delta = &dec_delta_;
  dec_in_.decay = &dec_decay_;
  dec_in_.threads = ref::default_threads();
  dec_in_.initial_state.assign(dec_kept_.size() * per_, 0.0);
  dec_in_.initial_error.assign(dec_kept_.size() * per_, 0.0);
  start = 0;
  for (size_t r = 0; r < dec_kept_.size(); ++r) {
    const int64_t q = dec_kept_[r];
    dec_rank_[q] = int64_t(r);
    dec_start_[q] = start;
    start += len[q] - prefill[q];
    std::copy_n(handed_error_.begin() + q * per_, per_, dec_in_.initial_error.begin() + int64_t(r) * per_);
    if (prefill[q] == 0 && p.has_initial_state()) {
      for (int64_t i = 0; i < per_; ++i) dec_in_.initial_state[r * per_ + i] = double(p.initial_state[q * per_ + i]);
    }
  }
}

int64_t HandoffStream::prefix_token(int64_t q, int64_t t) const {
  const int64_t j = t - p_.shape.cu_seqlens[q];
  return j < prefill_[q] ? pre_start_[q] + j : -1;
}

int64_t HandoffStream::decode_token(int64_t q, int64_t t) const {
  const int64_t j = t - p_.shape.cu_seqlens[q];
  return j >= prefill_[q] ? dec_start_[q] + j - prefill_[q] : -1;
}

void HandoffStream::set_split_state(int64_t q, int64_t h, std::span<const double> nearest) {
  const int64_t r = dec_rank_[q], pn = p_.shape.P * p_.shape.N;
  if (r < 0) return;
  std::copy(nearest.begin(), nearest.end(), dec_in_.initial_state.begin() + r * per_ + h * pn);
}

bound::Attribution HandoffStream::attribute(bool is_y, int64_t index, const bound::YElement* y) const {
  const Shape& s = p_.shape;
  const int64_t HP = s.H * s.P;
  if (is_y) {
    const int64_t t = index / HP;
    const std::vector<int64_t>& cu = s.cu_seqlens;
    const int64_t q = int64_t(std::upper_bound(cu.begin(), cu.end(), t) - cu.begin()) - 1;
    const int64_t tp = prefix_token(q, t);
    if (tp >= 0) return bound::attribute_chunked(pre_in_, bound::BoundOf::y, tp * HP + index % HP, y);
    return bound::attribute_sequential(dec_in_, bound::BoundOf::y, decode_token(q, t) * HP + index % HP, y);
  }
  const int64_t q = index / per_;
  if (dec_rank_[q] >= 0) {
    return bound::attribute_sequential(dec_in_, bound::BoundOf::stored_state, dec_rank_[q] * per_ + index % per_);
  }
  return bound::attribute_chunked(pre_in_, bound::BoundOf::final_state, pre_rank_[q] * per_ + index % per_);
}

HandoffBounds handoff_bounds(const Problem& p, const std::vector<int64_t>& prefill, const Contract& chunked,
                             const Contract& decode, bool decode_stores_every_token, const ref::ExactResult& exact) {
  return HandoffParts(p, prefill, chunked, decode, decode_stores_every_token, exact).bounds();
}

bound::Attribution handoff_attribution(const Problem& p, const std::vector<int64_t>& prefill, const Contract& chunked,
                                       const Contract& decode, bool decode_stores_every_token,
                                       const ref::ExactResult& exact, bool is_y, int64_t index) {
  return HandoffParts(p, prefill, chunked, decode, decode_stores_every_token, exact).attribute(is_y, index);
}

}  // namespace ssmv::verify
