#include "verify/judge/external_check.h"

#include <memory>
#include <mutex>
#include <unordered_map>

#include "reference/round.h"

#include "verify/bound/sequential_bound.h"
#include "verify/judge/exact_bounds.h"
#include "verify/judge/handoff.h"
#include "verify/judge/worst_sources.h"

namespace ssmv::verify {
namespace {

void expect_family(const Contract& c, Family want, const std::string& role, const std::string& kernel) {
  if (c.family == want) return;
  throw ProblemError(role + " '" + c.name + "' is of the " + std::string(family_name(c.family)) + " family; kernel '" +
                     kernel + "' needs the " + std::string(family_name(want)) + " family there");
}

// The contract must describe the problem's input format.
void expect_inputs(const Contract& c, const Problem& p) {
  if (describes_input_format(c, p.formats.input)) return;
  std::string list;
  for (Format f : c.input_formats) list += (list.empty() ? "" : ", ") + std::string(format_name(f));
  throw ProblemError("input format " + std::string(format_name(p.formats.input)) + ": contract '" + c.name +
                     "' describes inputs in " + list + " only (its input_formats)");
}

// y [T, H, P] and final_states [S, H, P, N] (or empty) must fit the problem.
void check_output_sizes(const Problem& p, const std::vector<float>& y, const std::vector<float>& final_states) {
  const Shape& s = p.shape;
  if (int64_t(y.size()) != s.num_tokens() * s.H * s.P) {
    throw ProblemError("outputs: y has " + std::to_string(y.size()) + " elements, the problem needs " +
                       std::to_string(s.num_tokens() * s.H * s.P));
  }
  if (!final_states.empty() && int64_t(final_states.size()) != s.num_sequences() * s.H * s.P * s.N) {
    throw ProblemError("outputs: final_states has " + std::to_string(final_states.size()) +
                       " elements, the problem needs " + std::to_string(s.num_sequences() * s.H * s.P * s.N));
  }
}

KernelCheck judge_outputs(const Problem& p, KernelCheck kc, const ref::ExactResult& exact, const std::vector<float>& y,
                          const std::vector<double>& y_bound, const std::vector<float>& final_states,
                          const std::vector<double>& state_bound) {
  kc.tensors.push_back(judge_tensor("y", p.formats.output, format_bits(p.formats.output, y), exact.y, y_bound, p,
                                    y_coords, kYCoordNames));
  if (!final_states.empty()) {
    kc.tensors.push_back(judge_tensor("final_state", p.formats.state, format_bits(p.formats.state, final_states),
                                      exact.final_state, state_bound, p, state_coords, kStateCoordNames));
  }
  return kc;
}

// Judges the reference's outputs as they arrive from the worker threads (y of each token,
// then the final state of each pair) against the kernel's values, with each element's
// bound computed in the stream: one bound::SequentialPairBound per pair in progress, which
// reads the y the reference hands over (the bound's y terms, docs/bounds.md [2.7], [2.8]).
// The pairs in progress are at most the reference's worker threads; a finished pair's
// stepper serves the next one.
class JudgingSink : public ref::Sink {
 public:
  JudgingSink(const Problem& p, const bound::SequentialInput& in, const std::vector<float>& y, TensorJudge& y_judge,
              const std::vector<float>& final_states, TensorJudge* state_judge)
      : p_(p), in_(in), y_(y), y_judge_(y_judge), final_states_(final_states), state_judge_(state_judge) {}

  void token(const ref::TokenOutputs& o) override {
    PairWork& w = pair(o.sequence, o.head);
    w.bound.step(o.token, o.y_nearest, o.y_certified_error, o.y_ungated, w.y_bound);
    const Format f = p_.formats.output;
    for (int64_t q = 0; q < p_.shape.P; ++q) {
      const size_t i = size_t(p_.x_index(o.token, o.head, q)), k = size_t(q);
      y_judge_.add(int64_t(i), round_nearest_even(f, y_[i]), ref::round_nearest_even(f, o.y[k]), o.y_nearest[k],
                   o.y_certified_error[k], o.y_magnitude[k], w.y_bound[k], o.y[k], o.y_ungated[k]);
    }
  }

  void state(const ref::StateOutputs& o) override {
    if (!o.final) return;
    PairWork& w = pair(o.sequence, o.head);
    w.bound.finish(w.state, w.stored_state);
    if (state_judge_) {
      const Format f = p_.formats.state;
      const size_t base = size_t(p_.state_index(o.sequence, o.head, 0, 0));
      for (size_t k = 0; k < o.nearest.size(); ++k) {
        const size_t i = base + k;
        state_judge_->add(int64_t(i), round_nearest_even(f, final_states_[i]), ref::round_nearest_even(f, o.value[k]),
                          o.nearest[k], o.certified_error[k], o.magnitude[k], w.stored_state[k], o.value[k]);
      }
    }
    release(o.sequence, o.head);
  }

 private:
  // One pair's stepper and its outputs' buffers.
  struct PairWork {
    bound::SequentialPairBound bound;
    std::vector<double> y_bound, state, stored_state;  // [P], [P, N], [P, N]
    PairWork(const bound::SequentialInput& in, const Shape& s)
        : bound(in), y_bound(size_t(s.P)), state(size_t(s.P * s.N)), stored_state(size_t(s.P * s.N)) {}
  };

  // Pair (seq, h)'s work, started at its first output. Called by the pair's worker only.
  PairWork& pair(int64_t seq, int64_t h) {
    const int64_t key = seq * p_.shape.H + h;
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = active_.find(key);
    if (it != active_.end()) return *it->second;
    std::unique_ptr<PairWork> w;
    if (!idle_.empty()) {
      w = std::move(idle_.back());
      idle_.pop_back();
    } else {
      w = std::make_unique<PairWork>(in_, p_.shape);
    }
    w->bound.start(seq, h);
    return *(active_[key] = std::move(w));
  }

  void release(int64_t seq, int64_t h) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = active_.find(seq * p_.shape.H + h);
    idle_.push_back(std::move(it->second));
    active_.erase(it);
  }

  const Problem& p_;
  const bound::SequentialInput& in_;
  const std::vector<float>& y_;
  TensorJudge& y_judge_;
  const std::vector<float>& final_states_;
  TensorJudge* state_judge_;
  std::mutex mutex_;
  std::unordered_map<int64_t, std::unique_ptr<PairWork>> active_;
  std::vector<std::unique_ptr<PairWork>> idle_;
};

// The sequential family, streamed over the tokens: δ and the decay first
// (ref::compute_scalars, bit for bit compute()'s), then every output judged as the
// reference hands it over (ref::compute_streaming), its bound computed in the stream from
// the y handed over (JudgingSink). No exact value and no bound is kept per element: memory
// is the kernel's outputs and O(threads·P·N). The bounds, verdicts and attribution are
// those of bounding and judging compute()'s whole result (check_outputs_test).
KernelCheck check_sequential_outputs(const Problem& p, const Contract& contract, const std::string& kernel,
                                     const std::vector<float>& y, const std::vector<float>& final_states,
                                     ElementDetail detail) {
  const ref::ExactScalars scalars = ref::compute_scalars(p);
  bound::SequentialInput in;  // no y vectors: each token's y comes with the stream
  in.problem = &p;
  in.contract = &contract;
  in.delta = &scalars.delta;
  in.decay = &scalars.decay;
  in.store_every_token = true;
  const bound::SequentialPairBound budgets_checked(in);  // throws before the reference runs, as the batch bound would
  const Shape& s = p.shape;
  TensorJudge y_judge("y", p.formats.output, s.num_tokens() * s.H * s.P, p, y_coords, kYCoordNames, detail);
  std::unique_ptr<TensorJudge> state_judge;
  if (!final_states.empty()) {
    state_judge = std::make_unique<TensorJudge>("final_state", p.formats.state,
                                                s.num_sequences() * s.state_elements_per_sequence(), p, state_coords,
                                                kStateCoordNames, detail);
  }
  JudgingSink sink(p, in, y, y_judge, final_states, state_judge.get());
  ref::compute_streaming(p, sink);
  KernelCheck kc{kernel, contract.name, "external", {}};
  kc.tensors.push_back(y_judge.finish());
  // The worst y element's bound split over its sources from its own y (the stream kept no other).
  const TensorJudge::WorstInputs& wy = y_judge.worst_inputs();
  const bound::YElement worst_y{kc.tensors[0].worst.exact, wy.certified_error, wy.extra};
  attribute_worst(kc.tensors[0], in, bound::BoundOf::y, kc.tensors[0].worst.index, &worst_y);
  if (state_judge) {
    kc.tensors.push_back(state_judge->finish());
    attribute_worst(kc.tensors[1], in, bound::BoundOf::stored_state, kc.tensors[1].worst.index);
  }
  return kc;
}

}  // namespace

KernelCheck check_outputs(const Problem& p, const Contract& contract, const std::string& kernel,
                          const std::vector<float>& y, const std::vector<float>& final_states, ElementDetail detail) {
  validate(p);
  check_output_sizes(p, y, final_states);
  if (contract.family == Family::sequential) return check_sequential_outputs(p, contract, kernel, y, final_states, detail);
  const ref::ExactResult exact = ref::compute(p);
  bound::ChunkedBounds b = chunked_bounds_for(p, contract, exact);
  KernelCheck kc = judge_outputs(p, KernelCheck{kernel, contract.name, "external", {}}, exact, y, b.y, final_states,
                                 b.final_state);
  for (TensorReport& r : kc.tensors) {
    attribute_worst(r, p, contract, exact, r.name == "y" ? bound::BoundOf::y : bound::BoundOf::final_state);
  }
  return kc;
}

KernelCheck check_handoff_outputs(const Problem& p, const std::vector<int64_t>& prefill, const Contract& chunked,
                                  const Contract& decode, const std::string& kernel, const std::vector<float>& y,
                                  const std::vector<float>& final_states) {
  validate(p);
  check_output_sizes(p, y, final_states);
  const ref::ExactResult exact = ref::compute(p, handoff_reference_options(p, prefill));
  const HandoffBounds b = handoff_bounds(p, prefill, chunked, decode, /*decode_stores_every_token=*/true, exact);
  KernelCheck kc = judge_outputs(p, KernelCheck{kernel, chunked.name + "+" + decode.name, "external", {}}, exact, y,
                                 b.y, final_states, b.final_state);
  attribute_handoff(kc, p, prefill, chunked, decode, true, exact);
  return kc;
}

void validate_external(const Problem& p, const ExternalKernel& k) {
  if (k.family == "ssu") {
    expect_family(k.contract, Family::sequential, "contract", k.family);
  } else if (k.family == "chunk_scan") {
    expect_family(k.contract, Family::chunked, "contract", k.family);
  } else if (k.family == "handoff") {
    expect_family(k.contract, Family::chunked, "contract (the chunked prefill's)", k.family);
    expect_family(k.decode_contract, Family::sequential, "decode contract", k.family);
    validate_prefill(p, k.prefill_tokens);
    expect_inputs(k.contract, p);
    expect_inputs(k.decode_contract, p);
    return;
  } else {
    throw ProblemError("kernel '" + k.family + "': expected ssu, chunk_scan or handoff");
  }
  expect_inputs(k.contract, p);
  if (!k.prefill_tokens.empty()) {
    throw ProblemError("prefill_tokens given for kernel '" + k.family +
                       "': only a hand-off (kernel handoff) has a prefill prefix");
  }
}

KernelCheck check_external(const Problem& p, const ExternalKernel& k, const std::vector<float>& y,
                           const std::vector<float>& final_states, ElementDetail detail) {
  validate_external(p, k);
  const std::string name = k.name.empty() ? k.family : k.name;
  if (k.family == "handoff") {
    return check_handoff_outputs(p, k.prefill_tokens, k.contract, k.decode_contract, name, y, final_states);
  }
  return check_outputs(p, k.contract, name, y, final_states, detail);
}

}  // namespace ssmv::verify
