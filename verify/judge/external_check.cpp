#include "verify/judge/external_check.h"

#include <algorithm>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "reference/round.h"
#include "spec/parallel.h"
#include "spec/progress.h"

#include "verify/bound/chunked_bound.h"
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
void check_output_sizes(const Problem& p, const FormatValues& y, const FormatValues& final_states) {
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

// The judges of a streamed check: y, and the final states when the dump has them; with a
// feed, a reader beside the check is told each pair's progress as it is judged.
struct StreamJudges {
  std::unique_ptr<TensorJudge> y, state;
  JudgingFeed* feed;
  StreamJudges(const Problem& p, bool with_states, ElementDetail detail, JudgingFeed* feed) : feed(feed) {
    const Shape& s = p.shape;
    y = std::make_unique<TensorJudge>("y", p.formats.output, s.num_tokens() * s.H * s.P, y_layout(p), detail);
    if (with_states) {
      const int64_t elements = s.num_sequences() * s.state_elements_per_sequence();
      state = std::make_unique<TensorJudge>("final_state", p.formats.state, elements, state_layout(p, elements), detail);
    }
    if (feed != nullptr) feed->open(y->sharp_weights(), state ? state->sharp_weights() : nullptr);
  }
  // Token o.token's y of head o.head, element [t, h, q] with bound y_bound(q, flat index).
  template <class YBound>
  void add_y(const Problem& p, const ref::TokenOutputs& o, const FormatValues& computed, YBound y_bound) {
    const Format f = p.formats.output;
    constexpr int64_t kBlock = 64;  // the row read kBlock values at a time (FormatValues::read)
    float buffer[kBlock];
    for (int64_t q0 = 0; q0 < p.shape.P; q0 += kBlock) {
      const int64_t b = std::min(kBlock, p.shape.P - q0);
      const float* c = computed.read(size_t(p.x_index(o.token, o.head, q0)), size_t(b), buffer);
      for (int64_t q = q0; q < q0 + b; ++q) {
        const size_t i = size_t(p.x_index(o.token, o.head, q)), k = size_t(q);
        y->add(int64_t(i), round_nearest_even(f, c[q - q0]), ref::round_nearest_even(f, o.y[k]), o.y_nearest[k],
               o.y_certified_error[k], o.y_magnitude[k], y_bound(k, i), o.y[k], o.y_ungated[k]);
      }
    }
    if (feed != nullptr) {
      const Shape& s = p.shape;
      const int64_t tokens = o.token - s.cu_seqlens[size_t(o.sequence)] + 1;
      feed->rows_judged(o.sequence * s.H + o.head, tokens, tokens == s.seq_len(o.sequence));
    }
  }
  // A pair's final state, element base + k with bound[k].
  void add_final_state(const Problem& p, const ref::StateOutputs& o, const FormatValues& final_states,
                       const double* bound) {
    if (!o.final || !state) return;
    const size_t base = size_t(p.state_index(o.sequence, o.head, 0, 0)), n = o.nearest.size();
    std::vector<float> decoded(final_states.holds_bits() ? n : 0);  // a 16-bit state's values
    state->add_run(int64_t(base), std::span<const float>(final_states.read(base, n, decoded.data()), n), o.value,
                   o.nearest.data(), o.certified_error.data(), o.magnitude.data(), bound);
    if (feed != nullptr) feed->state_judged(o.sequence * p.shape.H + o.head);
  }
  // The reports, the worst y element's kept y with them (attribution reads it).
  std::vector<TensorReport> finish(bound::YElement& worst_y) {
    std::vector<TensorReport> r;
    r.push_back(y->finish());
    worst_y = {r[0].worst.exact, y->worst_inputs().certified_error, y->worst_inputs().extra};
    if (state) r.push_back(state->finish());
    return r;
  }
};

// One bound::SequentialPairBound per (sequence, head) pair in progress of a streamed check,
// with its outputs' buffers: taken (and started from the input's initial state and error) at
// the pair's first output, given back after its final state. The pairs in progress are at
// most the reference's worker threads; a finished pair's stepper serves the next one.
class StepperPool {
 public:
  struct Work {
    bound::SequentialPairBound bound;
    std::vector<double> y_bound, state, stored_state;  // [P], [P, N], [P, N]
    Work(const bound::SequentialInput& in, const Shape& s)
        : bound(in), y_bound(size_t(s.P)), state(size_t(s.P * s.N)), stored_state(size_t(s.P * s.N)) {}
  };

  explicit StepperPool(const bound::SequentialInput& in) : in_(in) {}

  // Pair (seq, h) of the input's problem. Called by the pair's worker only, so no other thread
  // asks for the same pair: the pool's lock is held only to look up, take and file a Work, and
  // the pair's start (its state-sized bounds from the initial state) runs outside it — under
  // the lock, the starts of a 256-request decode step's 8192 pairs had been serialised.
  Work& get(int64_t seq, int64_t h) {
    const int64_t key = seq * in_.problem->shape.H + h;
    std::unique_ptr<Work> w;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = active_.find(key);
      if (it != active_.end()) return *it->second;
      if (!idle_.empty()) {
        w = std::move(idle_.back());
        idle_.pop_back();
      }
    }
    if (!w) w = std::make_unique<Work>(in_, in_.problem->shape);
    w->bound.start(seq, h);
    Work& taken = *w;
    std::lock_guard<std::mutex> lock(mutex_);
    active_[key] = std::move(w);
    return taken;
  }

  void release(int64_t seq, int64_t h) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = active_.find(seq * in_.problem->shape.H + h);
    idle_.push_back(std::move(it->second));
    active_.erase(it);
  }

 private:
  const bound::SequentialInput& in_;
  std::mutex mutex_;
  std::unordered_map<int64_t, std::unique_ptr<Work>> active_;
  std::vector<std::unique_ptr<Work>> idle_;
};

// Judges the reference's outputs as they arrive from the worker threads (y of each token,
// then the final state of each pair) against the kernel's values, with each element's
// bound computed in the stream by the pair's stepper, which reads the y the reference hands
// over (the bound's y terms, docs/bounds.md [2.7], [2.8]).
class JudgingSink : public ref::Sink {
 public:
  JudgingSink(const Problem& p, const bound::SequentialInput& in, const FormatValues& y, StreamJudges& judges,
              const FormatValues& final_states)
      : p_(p), pool_(in), y_(y), judges_(judges), final_states_(final_states) {}

  void token(const ref::TokenOutputs& o) override {
    StepperPool::Work& w = pool_.get(o.sequence, o.head);
    w.bound.step(o.token, o.y_nearest, o.y_certified_error, o.y_ungated, w.y_bound);
    judges_.add_y(p_, o, y_, [&](size_t k, size_t) { return w.y_bound[k]; });
  }

  void state(const ref::StateOutputs& o) override {
    if (!o.final) return;
    StepperPool::Work& w = pool_.get(o.sequence, o.head);
    w.bound.finish(w.state, w.stored_state);
    judges_.add_final_state(p_, o, final_states_, w.stored_state.data());
    pool_.release(o.sequence, o.head);
  }

 private:
  const Problem& p_;
  StepperPool pool_;
  const FormatValues& y_;
  StreamJudges& judges_;
  const FormatValues& final_states_;
};

// The hand-off, streamed (verify/judge/handoff.h HandoffStream): one reference run over the
// whole problem, the state at each split requested. A prefix token's y is judged with the
// chunked bound finished from its own y; at the split the exact state the decode starts
// from is handed to the decode part, whose tokens and final state are judged with the
// pair's sequential stepper. A sequence without decoded tokens keeps the chunked bound of
// its stored state.
class HandoffJudgingSink : public ref::Sink {
 public:
  HandoffJudgingSink(const Problem& p, HandoffStream& parts, const FormatValues& y, StreamJudges& judges,
                     const FormatValues& final_states)
      : p_(p), parts_(parts), pool_(parts.decode_input()), y_(y), judges_(judges), final_states_(final_states) {}

  void token(const ref::TokenOutputs& o) override {
    const Problem& pre = parts_.prefix_problem();
    const int64_t tp = parts_.prefix_token(o.sequence, o.token);
    if (tp >= 0) {
      const float* before_dx = parts_.prefix_before_dx(tp, o.head);
      judges_.add_y(p_, o, y_, [&](size_t k, size_t) {
        const int64_t yi = pre.x_index(tp, o.head, int64_t(k));
        return parts_.prefix_y(yi, before_dx[k], {o.y_nearest[k], o.y_certified_error[k], o.y_ungated[k]});
      });
      return;
    }
    StepperPool::Work& w = pool_.get(parts_.decode_sequence(o.sequence), o.head);
    w.bound.step(parts_.decode_token(o.sequence, o.token), o.y_nearest, o.y_certified_error, o.y_ungated, w.y_bound);
    judges_.add_y(p_, o, y_, [&](size_t k, size_t) { return w.y_bound[k]; });
  }

  void state(const ref::StateOutputs& o) override {
    const int64_t r = parts_.decode_sequence(o.sequence);
    if (!o.final) {  // the state at the split, before the first decoded token
      if (r >= 0 && o.position == parts_.split(o.sequence)) parts_.set_split_state(o.sequence, o.head, o.nearest);
      return;
    }
    if (r < 0) {  // no decoded tokens: the chunked kernel's stored state
      judges_.add_final_state(p_, o, final_states_, parts_.handed_error(o.sequence, o.head));
      return;
    }
    StepperPool::Work& w = pool_.get(r, o.head);
    w.bound.finish(w.state, w.stored_state);
    judges_.add_final_state(p_, o, final_states_, w.stored_state.data());
    pool_.release(r, o.head);
  }

 private:
  const Problem& p_;
  HandoffStream& parts_;
  StepperPool pool_;
  const FormatValues& y_;
  StreamJudges& judges_;
  const FormatValues& final_states_;
};

// A check's attribution, run now in a progress phase of its own (--timings shows what it
// costs), or handed to `deferred` to run later.
void attribute_or_defer(DeferredAttribution attribute, DeferredAttribution* deferred, KernelCheck& kc) {
  if (deferred != nullptr) {
    *deferred = std::move(attribute);
    return;
  }
  const progress::Phase phase("attribution", 0, "");
  attribute(kc);
}

// δ and the decay of every (token, head), computed once for the bounds and the reference, and
// shared with an attribution that outlives the check (deferred): 4 bytes a pair and a table per
// (head, distinct dt) (spec/token_head_column.h).
std::shared_ptr<const ref::ExactScalars> shared_scalars(const Problem& p, const ref::Options& options) {
  return std::make_shared<const ref::ExactScalars>(ref::compute_scalars(p, options));
}

// The sequential family, streamed over the tokens: δ and the decay first
// (ref::compute_scalars, bit for bit compute()'s), then every output judged as the
// reference hands it over (ref::compute_streaming), its bound computed in the stream from
// the y handed over (JudgingSink). No exact value and no bound is kept per element: memory
// is the kernel's outputs and O(threads·P·N). The bounds, verdicts and attribution are
// those of bounding and judging compute()'s whole result (check_outputs_test).
KernelCheck check_sequential_outputs(const Problem& p, const Contract& contract, const std::string& kernel,
                                     const FormatValues& y, const FormatValues& final_states,
                                     ElementDetail detail, int64_t tokens_per_launch,
                                     const bound::SourceWeights* weights, DeferredAttribution* deferred,
                                     JudgingFeed* feed) {
  ref::Options options;
  options.validated = true;  // check_outputs validated p
  const auto scalars = shared_scalars(p, options);
  options.scalars = scalars.get();  // δ and decay once: the fast tier reads them
  bound::SequentialInput in;  // no y vectors: each token's y comes with the stream
  in.problem = &p;
  in.contract = &contract;
  in.delta = scalars->delta_column();
  in.decay = scalars->decay_column();
  in.tokens_per_launch = tokens_per_launch;
  in.weights = weights;
  const bound::SequentialPairBound budgets_checked(in);  // throws before the reference runs, as the batch bound would
  StreamJudges judges(p, !final_states.empty(), detail, feed);
  JudgingSink sink(p, in, y, judges, final_states);
  ref::compute_streaming(p, sink, options);
  bound::YElement worst_y;
  KernelCheck kc{kernel, contract.name, "external", judges.finish(worst_y)};
  // The worst y element's bound split over its sources from its own y (the stream kept no other);
  // deferred, it keeps the scalars that `in` reads.
  attribute_or_defer(
      [scalars, kept = in, worst_y](KernelCheck& k) {
        attribute_worst(k.tensors[0], kept, bound::BoundOf::y, k.tensors[0].worst.index, &worst_y);
        if (k.tensors.size() > 1) {
          attribute_worst(k.tensors[1], kept, bound::BoundOf::stored_state, k.tensors[1].worst.index);
        }
      },
      deferred, kc);
  return kc;
}

// Judges a chunked kernel's outputs as the reference hands them over: each y element's
// bound finished from the chunked bound's y_before_dx and the element's own y
// (bound::ChunkedYBound), each final-state element with its precomputed bound.
class ChunkedJudgingSink : public ref::Sink {
 public:
  // With `handover` (the bound running beside the reference), each row and each sequence's
  // final-state bounds are waited for before they are read.
  ChunkedJudgingSink(const Problem& p, const bound::ChunkedInput& in, bound::ChunkedBounds& b,
                     const FormatValues& y, StreamJudges& judges, const FormatValues& final_states,
                     bound::RowHandover* handover)
      : p_(p), finish_(in), b_(b), y_(y), judges_(judges), final_states_(final_states), handover_(handover) {}

  // The reference hands each (token, head) over once: its floats are read here for the last
  // time and released (bound::YBeforeDx), as the y report's weights fill.
  void token(const ref::TokenOutputs& o) override {
    if (handover_ != nullptr) handover_->wait_row(o.token, o.head);
    const float* before_dx = b_.y_before_dx.row(o.token, o.head);
    judges_.add_y(p_, o, y_, [&](size_t k, size_t i) {
      return finish_(int64_t(i), before_dx[k], {o.y_nearest[k], o.y_certified_error[k], o.y_ungated[k]});
    });
    b_.y_before_dx.release(o.token, o.head);
    if (handover_ != nullptr) handover_->consumed(o.sequence, o.head, o.token + 1);
  }

  void state(const ref::StateOutputs& o) override {
    if (handover_ != nullptr) handover_->wait_sequence(o.sequence);
    judges_.add_final_state(p_, o, final_states_, &b_.final_state[size_t(p_.state_index(o.sequence, o.head, 0, 0))]);
  }

  void pair_failed() override {
    if (handover_ != nullptr) handover_->unthrottle();
  }

 private:
  const Problem& p_;
  const bound::ChunkedYBound finish_;
  bound::ChunkedBounds& b_;
  const FormatValues& y_;
  StreamJudges& judges_;
  const FormatValues& final_states_;
  bound::RowHandover* handover_;
};

// How far the bound beside the reference may run ahead of a pair's judging: one chunk (256
// tokens in production), so that a head holds only a few pieces' rows beyond those being read
// (its y_before_dx block, 4096 tokens at P = 64, goes back once read), while the bound, several
// times faster per head than the reference, still keeps ahead of it.
int64_t bound_lead_tokens(const Contract& contract) { return contract.chunk_size; }

// The bound runs beside the reference when every (sequence, head) pair of the reference can run
// at once and threads are left for the bound, a head at a time: `threads` ≥ S·H + H. Then the
// reference runs S·H workers and the bound the rest, together no more than `threads`; returns
// the bound's share, or 0 (the bound first, on every thread).
int bound_threads_beside_reference(const Problem& p, int threads) {
  const int64_t pairs = p.shape.num_sequences() * p.shape.H;
  return pairs > 0 && int64_t(threads) >= pairs + p.shape.H ? int(int64_t(threads) - pairs) : 0;
}

// The chunked family, streamed: δ first (ref::compute_scalars), the chunked bound up to
// the terms that read y (bound::ChunkedBounds::y_before_dx: the bound's state-sized working
// set and one float per y element; no chunk-end state bounds), then every output judged as the
// reference hands it over. No exact value is kept per element. The bounds, verdicts and attribution are those
// of bounding and judging compute()'s whole result (check_outputs_test).
KernelCheck check_chunked_outputs(const Problem& p, const Contract& contract, const std::string& kernel,
                                  const FormatValues& y, const FormatValues& final_states,
                                  ElementDetail detail, DeferredAttribution* deferred, JudgingFeed* feed) {
  ref::Options options;
  options.validated = true;  // check_outputs validated p
  const auto scalars = shared_scalars(p, options);
  options.scalars = scalars.get();  // δ and decay once: the fast tier reads them
  bound::ChunkedInput in;  // no y vectors: each element's y comes with the stream
  in.problem = &p;
  in.contract = &contract;
  in.delta = scalars->delta_column();
  in.threads = ref::default_threads();
  in.boundary_states = false;  // a dump's chunk-end states are not judged
  StreamJudges judges(p, !final_states.empty(), detail, feed);
  bound::ChunkedBounds b;
  if (const int bound_threads = bound_threads_beside_reference(p, in.threads); bound_threads > 0) {
    // The bound on a thread of its own with the threads the pairs leave: its rows go to the
    // judging piece by piece (bound::RowHandover) instead of being held whole. Same bounds,
    // same judging: the same report.
    bound::RowHandover handover(p.shape.cu_seqlens, p.shape.H, bound_lead_tokens(contract));
    bound::ChunkedInput beside = in;
    beside.threads = bound_threads;
    beside.handover = &handover;
    std::exception_ptr bound_failure, reference_failure;
    std::thread bound_thread([&] {
      try {
        bound::fill_chunked_bounds(beside, b);
      } catch (...) {
        bound_failure = std::current_exception();
      }
    });
    try {
      ChunkedJudgingSink sink(p, in, b, y, judges, final_states, &handover);
      options.threads = in.threads - bound_threads;  // every pair at once
      ref::compute_streaming(p, sink, options);
    } catch (...) {
      reference_failure = std::current_exception();
    }
    handover.unthrottle();  // a failed reference leaves rows unread
    bound_thread.join();
    // The bound's error first, as when it ran before the reference (a judging it stopped threw
    // bound::RowHandoverStopped).
    if (bound_failure) std::rethrow_exception(bound_failure);
    if (reference_failure) std::rethrow_exception(reference_failure);
  } else {
    b = bound::chunked_bounds(in);
    ChunkedJudgingSink sink(p, in, b, y, judges, final_states, nullptr);
    ref::compute_streaming(p, sink, options);
  }
  // Every y bound is finished (and every row released): what is left of the per-element floats
  // goes before the attribution's state-sized tagged bounds are built.
  b.y_before_dx.clear();
  bound::YElement worst_y;
  KernelCheck kc{kernel, contract.name, "external", judges.finish(worst_y)};
  // The worst y element's and the worst final-state element's bounds split over their sources:
  // two tagged runs of the bound over one (head, dim) each, single-threaded and independent,
  // so side by side (a tenth of a second each at chunk_scan 1 × 8192 × 32 heads) — or, deferred,
  // one after the other on the thread beside the sharp verdict, so that their tagged working
  // sets (about 15 MB each at chunk 256) do not add up on top of the sharp verdict's; then it
  // keeps the scalars that `in` reads.
  const int workers = deferred != nullptr ? 1 : 2;
  attribute_or_defer(
      [scalars, kept = in, worst_y, workers](KernelCheck& k) {
        for_each_task(int64_t(k.tensors.size()), workers, [&](int64_t i, int64_t) {
          if (i == 0) attribute_worst(k.tensors[0], kept, bound::BoundOf::y, &worst_y);
          if (i == 1) attribute_worst(k.tensors[1], kept, bound::BoundOf::final_state);
        });
      },
      deferred, kc);
  return kc;
}

}  // namespace

KernelCheck check_outputs(const Problem& p, const Contract& contract, const std::string& kernel,
                          const FormatValues& y, const FormatValues& final_states, ElementDetail detail,
                          int64_t tokens_per_launch, const bound::SourceWeights* weights,
                          DeferredAttribution* deferred, JudgingFeed* feed) {
  validate(p);
  check_output_sizes(p, y, final_states);
  if (contract.family == Family::sequential) {
    return check_sequential_outputs(p, contract, kernel, y, final_states, detail, tokens_per_launch, weights,
                                    deferred, feed);
  }
  if (weights != nullptr) throw std::invalid_argument("check_outputs: source weights apply to the sequential family");
  return check_chunked_outputs(p, contract, kernel, y, final_states, detail, deferred, feed);
}

KernelCheck check_handoff_outputs(const Problem& p, const std::vector<int64_t>& prefill, const Contract& chunked,
                                  const Contract& decode, const std::string& kernel, const FormatValues& y,
                                  const FormatValues& final_states, ElementDetail detail) {
  validate(p);
  check_output_sizes(p, y, final_states);
  ref::Options options = handoff_reference_options(p, prefill);
  options.validated = true;  // validated above
  const ref::ExactScalars scalars = ref::compute_scalars(p, options);
  options.scalars = &scalars;  // δ and decay once: the fast tier reads them
  HandoffStream parts(p, prefill, chunked, decode, /*decode_stores_every_token=*/true, scalars.delta_column(),
                      scalars.decay_column());
  const bound::SequentialPairBound budgets_checked(parts.decode_input());  // throws before the reference runs
  StreamJudges judges(p, !final_states.empty(), detail, nullptr);
  HandoffJudgingSink sink(p, parts, y, judges, final_states);
  ref::compute_streaming(p, sink, options);
  bound::YElement worst_y;
  KernelCheck kc{kernel, chunked.name + "+" + decode.name, "external", judges.finish(worst_y)};
  for (TensorReport& r : kc.tensors) {
    if (r.worst.index < 0 || r.worst.bound <= 0) continue;
    keep_shares(r, parts.attribute(r.name == "y", r.worst.index, r.name == "y" ? &worst_y : nullptr));
  }
  return kc;
}

// A decode dump's launches: every sequence's length a multiple of tokens_per_launch (each
// launch held K tokens); another family runs no launches of several tokens.
void validate_tokens_per_launch(const Problem& p, const ExternalKernel& k) {
  const int64_t K = k.tokens_per_launch;
  if (K < 1) throw ProblemError("tokens_per_launch = " + std::to_string(K) + ": must be >= 1");
  if (K == 1) return;
  if (k.family != "ssu") {
    throw ProblemError("tokens_per_launch = " + std::to_string(K) + " given for kernel '" + k.family +
                       "': only a decode kernel (ssu) is launched on several tokens at once");
  }
  const Shape& s = p.shape;
  for (int64_t q = 0; q < s.num_sequences(); ++q) {
    if (s.seq_len(q) % K != 0) {
      throw ProblemError("tokens_per_launch = " + std::to_string(K) + ": sequence " + std::to_string(q) + " has " +
                         std::to_string(s.seq_len(q)) + " tokens, not a multiple of " + std::to_string(K) +
                         " (each launch of a dump holds tokens_per_launch tokens of every sequence)");
    }
  }
}

namespace {

// A block-scaled state (int16_scaled) is a decode cache: rounded to nearest, row by row, by a
// sequential kernel's stores (verify/bound/error_model.h scaled_rounding_error).
void expect_state_format(const Problem& p, const ExternalKernel& k) {
  const Format f = p.formats.state;
  if (!block_scaled(f)) return;
  const std::string what = "state format '" + std::string(format_name(f)) + "'";
  if (k.family != "ssu") {
    throw ProblemError(what + " given for kernel '" + k.family +
                       "': a block-scaled state is bounded for a decode kernel (kernel ssu) only");
  }
  for (const Rounding& r : k.contract.roundings) {
    if (r.mode == RoundingMode::stochastic && resolve(r.format, p.formats.input, f, p.formats.output) == f) {
      throw ProblemError(what + " with contract '" + k.contract.name + "', which rounds '" +
                         std::string(point_name(r.point)) + "' stochastically: a block-scaled format is rounded "
                         "to nearest only");
    }
  }
}

}  // namespace

void validate_external(const Problem& p, const ExternalKernel& k) {
  validate_tokens_per_launch(p, k);
  expect_state_format(p, k);
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

KernelCheck check_external(const Problem& p, const ExternalKernel& k, const FormatValues& y,
                           const FormatValues& final_states, ElementDetail detail,
                           const bound::SourceWeights* weights, DeferredAttribution* deferred, JudgingFeed* feed) {
  try {
    validate_external(p, k);
    const std::string name = k.name.empty() ? k.family : k.name;
    if (k.family == "handoff") {
      if (weights != nullptr) throw std::invalid_argument("check_external: source weights apply to one kernel, not a hand-off");
      if (feed != nullptr) throw std::invalid_argument("check_external: a judging feed follows one kernel, not a hand-off");
      return check_handoff_outputs(p, k.prefill_tokens, k.contract, k.decode_contract, name, y, final_states, detail);
    }
    KernelCheck kc =
        check_outputs(p, k.contract, name, y, final_states, detail, k.tokens_per_launch, weights, deferred, feed);
    if (feed != nullptr) feed->close(true);
    return kc;
  } catch (...) {
    if (feed != nullptr) feed->close(false);  // the reader beside stops instead of waiting
    throw;
  }
}

}  // namespace ssmv::verify
