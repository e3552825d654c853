#include "reference/driver.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <type_traits>
#include <string>
#include <thread>

#include "reference/arithmetic.h"
#include "reference/certify.h"
#include "reference/gate_memo.h"
#include "reference/head_recurrence.h"
#include "reference/magnitude.h"
#include "reference/mpfr_bound.h"
#include "reference/round.h"
#include "reference/tiered.h"
#include "spec/parallel.h"
#include "spec/progress.h"

namespace ssmv::ref::detail {
namespace {

// Largest precision accepted (bits): far beyond any need (the default is 127), and small
// enough that a mistyped value does not exhaust memory (P·N variables of this size).
constexpr int kMaxPrecisionBits = 1 << 16;

[[noreturn]] void bad_option(const std::string& msg) { throw ProblemError(msg); }

// |v| rounded up to double (away from zero, then the sign dropped).
double abs_up(mpfr_srcptr v) { return std::fabs(mpfr_get_d(v, MPFR_RNDA)); }

// Sorted distinct requested positions of each sequence.
std::vector<std::vector<int64_t>> positions_by_sequence(const Problem& pr, const Options& o) {
  const auto& cu = pr.shape.cu_seqlens;
  std::vector<std::vector<int64_t>> out(pr.shape.num_sequences());
  for (int64_t q : o.state_positions) {
    const int64_t s = (std::upper_bound(cu.begin(), cu.end(), q - 1) - cu.begin()) - 1;
    out[s].push_back(q);
  }
  for (auto& v : out) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
  }
  return out;
}

const Format kFormats[] = {Format::fp32, Format::bf16, Format::fp16};

// Whether every value within `err` of v has v's nearest double and (formats) v's correct
// rounding in fp32, bf16 and fp16: the ends of the enclosure, rounded outward at v's
// precision, round alike (rounding is monotone; equal bits also fix the sign of a zero).
class Decider {
 public:
  explicit Decider(mpfr_prec_t max_bits) {
    mpfr_init2(lo_, max_bits);
    mpfr_init2(hi_, max_bits);
  }
  ~Decider() {
    mpfr_clear(lo_);
    mpfr_clear(hi_);
  }
  Decider(const Decider&) = delete;
  Decider& operator=(const Decider&) = delete;

  bool decides(mpfr_srcptr v, double err, bool formats) {
    if (err == 0) return true;  // the value is exact
    mpfr_set_prec(lo_, mpfr_get_prec(v));
    mpfr_set_prec(hi_, mpfr_get_prec(v));
    mpfr_sub_d(lo_, v, err, MPFR_RNDD);
    mpfr_add_d(hi_, v, err, MPFR_RNDU);
    const double a = mpfr_get_d(lo_, MPFR_RNDN), b = mpfr_get_d(hi_, MPFR_RNDN);
    if (!(a == b) || std::signbit(a) != std::signbit(b)) return false;
    if (!formats) return true;
    for (Format f : kFormats) {
      if (round_nearest_even(f, lo_) != round_nearest_even(f, hi_)) return false;
    }
    return true;
  }

 private:
  mpfr_t lo_, hi_;
};

// One worker of the MPFR tier: one (sequence, head) pair at a time, reusing every variable.
// A pair runs once at the working precision with the a-priori bound of mpfr_bound.h; each
// value handed over is certified by its bound (else CertificationError) and its nearest
// double and format roundings are decided by its enclosure. A value the enclosure does not
// decide (within the bound of a rounding boundary: in practice an exact tie, such as an
// exact cancellation to 0) sends the pair again through the check precision, which hands
// over what is left; there an undecided value is taken as computed (docs/reference-tiers.md).
// δ, decay and the gates' magnitudes come from the check precision (TokenScalars, GateMemo),
// bit for bit those of the fast tier.
template <class Arith>
class PairRunner {
 public:
  PairRunner(const Problem& pr, const InitialStates& init, const Options& o, int check_bits,
             const std::vector<std::vector<int64_t>>& positions, Sink& sink)
      : pr_(pr), init_(init), positions_(positions), sink_(sink), P_(pr.shape.P), N_(pr.shape.N),
        work_bits_(o.precision_bits), check_bits_(check_bits), work_(o.precision_bits, P_, N_),
        check_(check_bits, P_, N_), ref_(check_bits, P_), gates_(check_bits), mag_(P_, N_),
        cert_(o.certified_bits, check_bits), decider_(check_bits),
        bound_(o.precision_bits, N_), y_values_(P_), state_values_(P_ * N_), init_ptr_(P_ * N_), y_nearest_(P_),
        y_err_(P_), ungated_nearest_(P_), sum_abs_cs_(P_), gate_up_(P_), state_nearest_(P_ * N_),
        state_err_(P_ * N_), output_inexact_(new bool[size_t(P_)]) {}

  // Runs pair (s, h) from its first token; hands over neither the first `skip_tokens`
  // tokens nor the states of the first `skip_positions` requested positions (the fast
  // tier handed them over already). Returns the number of elements handed over.
  int64_t run(int64_t s, int64_t h, int64_t skip_tokens = 0, size_t skip_positions = 0) {
    Progress pg{skip_tokens, skip_positions, 0};
    if (attempt(work_, work_bits_, s, h, pg, /*last=*/work_bits_ >= check_bits_)) return pg.handed;
    attempt(check_, check_bits_, s, h, pg, /*last=*/true);
    return pg.handed;
  }

 private:
  struct Progress {
    int64_t tokens_done;    // tokens cu[s] .. cu[s] + tokens_done - 1 are handed over
    size_t positions_done;  // so are the first positions_done requested states
    int64_t handed;         // elements this runner handed over
  };

  // One pass over the pair at `bits` on `rec`; false when a value could not be decided
  // (never when `last`): nothing of that token or state was handed over.
  bool attempt(HeadRecurrence<Arith>& rec, int bits, int64_t s, int64_t h, Progress& pg, bool last) {
    load(rec, bits, s, h);
    const auto& cu = pr_.shape.cu_seqlens;
    const auto& positions = positions_[s];
    size_t next_position = 0;
    for (int64_t t = cu[s]; t < cu[s + 1]; ++t) {
      const bool emit = t - cu[s] >= pg.tokens_done;
      if (!token(rec, bits, s, t, h, emit, last)) return false;
      if (emit) {
        pg.tokens_done = t - cu[s] + 1;
        pg.handed += P_;
      }
      if (next_position < positions.size() && positions[next_position] == t + 1) {
        const bool emit_state = next_position >= pg.positions_done;
        if (!state(rec, bits, s, h, t + 1, false, emit_state, last)) return false;
        if (emit_state) {
          pg.positions_done = next_position + 1;
          pg.handed += P_ * N_;
        }
        ++next_position;
      }
    }
    if (!state(rec, bits, s, h, cu[s + 1], true, true, last)) return false;
    pg.handed += P_ * N_;
    return true;
  }

  // The initial state into `rec` (and the magnitudes), with Γ_0 and the exactness flag.
  void load(HeadRecurrence<Arith>& rec, int bits, int64_t s, int64_t h) {
    const int64_t hpn = P_ * N_;
    double gamma0 = 0;
    mpfr_clear_flags();
    if (init_.exact) {
      const int64_t base = (s * pr_.shape.H + h) * hpn;
      for (int64_t i = 0; i < hpn; ++i) init_ptr_[i] = init_.exact->value[base + i].backend().data();
      rec.load(init_ptr_.data());
      mag_.load(&init_.exact->magnitude[base]);
      // Rounding the given values to `bits` errs by u·|v|; relative to the magnitude that is
      // u·max(1, |v| / magnitude) (infinite for a nonzero value of magnitude 0).
      double ratio = 1;
      for (int64_t i = 0; i < hpn; ++i) {
        const double v = abs_up(init_ptr_[i]), m = init_.exact->magnitude[base + i];
        if (v > m) ratio = std::fmax(ratio, m > 0 ? v / m * MpfrRunBound::kUp : INFINITY);
      }
      gamma0 = std::ldexp(1.0, -bits) * ratio * MpfrRunBound::kUp;
    } else if (const float* f = init_.floats[s]) {
      rec.load(f + h * hpn);  // exact: fp32 values at >= 24 bits
      mag_.load(f + h * hpn);
    } else {
      rec.load_zero();
      mag_.load_zero();
    }
    exact_ = !mpfr_inexflag_p();
    if (exact_) gamma0 = 0;
    underflow_ = false;
    bound_ = MpfrRunBound(bits, N_);
    bound_.start(gamma0);
  }

  // `tensor` of token t failed its certificate: the message shows the value at the check
  // precision too (the pair run again up to token t when `rec` is the working run).
  [[noreturn]] void fail(HeadRecurrence<Arith>& rec, int bits, const char* tensor, const Coordinates& at,
                         mpfr_srcptr value, double bound, double magnitude, const char* why,
                         mpfr_srcptr (*pick)(const HeadRecurrence<Arith>&, int64_t), int64_t index) {
    if (&rec != &check_) {
      check_to(at.sequence, at.head, at.token >= 0 ? at.token : at.position - 1);
      cert_.fail(tensor, at, bits, value, pick(check_, index), bound, magnitude, why);
    }
    cert_.fail(tensor, at, bits, value, value, bound, magnitude, why);
  }

  // check_ through the tokens of pair (s, h) up to and including packed token `last_t`.
  void check_to(int64_t s, int64_t h, int64_t last_t) {
    load(check_, check_bits_, s, h);
    for (int64_t t = pr_.shape.cu_seqlens[s]; t <= last_t; ++t) check_.step(pr_, t, h, nullptr);
  }

  bool token(HeadRecurrence<Arith>& rec, int bits, int64_t s, int64_t t, int64_t h, bool emit, bool last) {
    mpfr_clear_flags();
    rec.step(pr_, t, h, sum_abs_cs_.data(), output_inexact_.get());
    exact_ = exact_ && !mpfr_inexflag_p();
    underflow_ = underflow_ || mpfr_underflow_p();
    // δ, decay and gates at the check precision: what the result reports and the
    // magnitudes use, whichever precision the run has.
    const bool own = bits == check_bits_;
    if (!own) ref_.step(pr_, t, h, false);
    const mpfr_srcptr delta_ref = own ? rec.delta() : ref_.delta();
    const mpfr_srcptr decay_ref = own ? rec.decay() : ref_.decay();
    const double delta_up = abs_up(delta_ref), decay_up = abs_up(decay_ref);
    const bool has_z = pr_.has_z();
    if (has_z) {
      for (int64_t p = 0; p < P_; ++p) gate_up_[p] = gates_.of(pr_.z[size_t(pr_.x_index(t, h, p))]).abs_up;
    }
    mag_.step(pr_, t, h, delta_up, decay_up, has_z ? gate_up_.data() : nullptr);
    bound_.step(abs_up(rec.delta()), double(pr_.A[h]));
    if (!emit) return true;  // the fast tier handed this token over: nothing to certify

    Coordinates at;
    at.sequence = s;
    at.token = t;
    at.head = h;
    // Certifies one value (bound 0 while every operation of the pair so far was exact).
    auto certify = [&](const char* tensor, mpfr_srcptr v, double bound, double magnitude,
                       mpfr_srcptr (*pick)(const HeadRecurrence<Arith>&, int64_t), int64_t index) {
      if (!mpfr_number_p(v)) fail(rec, bits, tensor, at, v, bound, magnitude, kNotFinite, pick, index);
      if (underflow_) fail(rec, bits, tensor, at, v, bound, magnitude, kUnderflow, pick, index);
      const double b = exact_ ? 0.0 : bound;
      if (!cert_.holds(v, b, magnitude)) fail(rec, bits, tensor, at, v, b, magnitude, kBoundTooLarge, pick, index);
      return b;
    };
    certify("delta", rec.delta(), MpfrRunBound::compose(bound_.rho_delta()) * abs_up(rec.delta()), delta_up,
            [](const HeadRecurrence<Arith>& r, int64_t) { return r.delta(); }, 0);
    certify("decay", rec.decay(), MpfrRunBound::compose(bound_.rho_decay()) * abs_up(rec.decay()), decay_up,
            [](const HeadRecurrence<Arith>& r, int64_t) { return r.decay(); }, 0);
    if (has_z) {
      for (int64_t p = 0; p < P_; ++p) {
        at.dim = p;
        certify("gate z*sigmoid(z)", rec.gate(p), MpfrRunBound::compose(bound_.rho_gate()) * abs_up(rec.gate(p)),
                gate_up_[p], [](const HeadRecurrence<Arith>& r, int64_t i) { return r.gate(i); }, p);
      }
    }
    for (int64_t p = 0; p < P_; ++p) {
      at.dim = p;
      const double Mu = mag_.y_ungated()[p];
      const double e_yu = bound_.y_ungated(Mu, mag_.reads_state(p), output_inexact_[p]);
      const double e_yu_cert = certify("y_ungated", rec.y_ungated(p), e_yu, Mu,
                                       [](const HeadRecurrence<Arith>& r, int64_t i) { return r.y_ungated(i); }, p);
      const double e_y = has_z ? bound_.y(e_yu, Mu, bound_.gate_bound(abs_up(rec.gate(p)))) : e_yu;
      y_err_[p] = certify("y", rec.y(p), e_y, mag_.y()[p],
                          [](const HeadRecurrence<Arith>& r, int64_t i) { return r.y(i); }, p);
      if (!last && (!decider_.decides(rec.y_ungated(p), e_yu_cert, false) ||
                    !decider_.decides(rec.y(p), y_err_[p], true))) {
        return false;
      }
      y_nearest_[p] = mpfr_get_d(rec.y(p), MPFR_RNDN);
      ungated_nearest_[p] = mpfr_get_d(rec.y_ungated(p), MPFR_RNDN);
      y_values_[p] = HandedValue{rec.y(p)};
    }
    const TokenOutputs out =
        token_outputs(s, t, h, mpfr_get_d(delta_ref, MPFR_RNDN), mpfr_get_d(decay_ref, MPFR_RNDN),
                      {y_values_, y_nearest_, y_err_, sum_abs_cs_, ungated_nearest_}, mag_, size_t(P_));
    sink_.token(out);
    return true;
  }

  bool state(HeadRecurrence<Arith>& rec, int bits, int64_t s, int64_t h, int64_t q, bool final, bool emit,
             bool last) {
    if (!emit) return true;
    Coordinates at;
    at.sequence = s;
    at.head = h;
    at.position = q;
    const char* tensor = final ? "final_state" : "state_at";
    auto pick = [](const HeadRecurrence<Arith>& r, int64_t i) { return r.state(i); };
    for (int64_t p = 0; p < P_; ++p) {
      at.state_p = p;
      for (int64_t n = 0; n < N_; ++n) {
        at.state_n = n;
        const int64_t i = p * N_ + n;
        const mpfr_srcptr v = rec.state(i);
        const double m = mag_.state()[i];
        if (!mpfr_number_p(v)) fail(rec, bits, tensor, at, v, INFINITY, m, kNotFinite, pick, i);
        if (underflow_) fail(rec, bits, tensor, at, v, INFINITY, m, kUnderflow, pick, i);
        const double e = exact_ ? 0.0 : bound_.state(m);
        if (!cert_.holds(v, e, m)) fail(rec, bits, tensor, at, v, e, m, kBoundTooLarge, pick, i);
        if (!last && !decider_.decides(v, e, true)) return false;
        state_err_[i] = e;
        state_nearest_[i] = mpfr_get_d(v, MPFR_RNDN);
        state_values_[i] = HandedValue{v};
      }
    }
    StateOutputs out;
    out.sequence = s;
    out.head = h;
    out.position = q;
    out.final = final;
    out.value = state_values_;
    out.nearest = state_nearest_;
    out.magnitude = {mag_.state(), size_t(P_ * N_)};
    out.certified_error = state_err_;
    sink_.state(out);
    return true;
  }

  const Problem& pr_;
  const InitialStates& init_;
  const std::vector<std::vector<int64_t>>& positions_;
  Sink& sink_;
  int64_t P_, N_;
  int work_bits_, check_bits_;
  HeadRecurrence<Arith> work_, check_;  // the working run; the check precision's (retries, messages)
  TokenScalars<RawMpfr> ref_;           // δ and decay at the check precision
  GateMemo gates_;                      // gates at the check precision
  MagnitudeRecurrence mag_;
  Certifier cert_;
  Decider decider_;
  MpfrRunBound bound_;
  bool exact_ = false;      // every MPFR operation of the pair so far was exact
  bool underflow_ = false;  // some MPFR operation of the pair underflowed
  std::vector<HandedValue> y_values_, state_values_;  // [P], [P, N]
  std::vector<mpfr_srcptr> init_ptr_;           // [P, N]
  std::vector<double> y_nearest_, y_err_, ungated_nearest_, sum_abs_cs_, gate_up_;  // [P]
  std::vector<double> state_nearest_, state_err_;                                   // [P, N]
  std::unique_ptr<bool[]> output_inexact_;  // [P] HeadRecurrence::step's
};

template <class Arith>
TierCounts run_with(const Problem& pr, const InitialStates& init, const Options& o, Sink& sink) {
  const int check_bits = o.resolved_check_precision_bits();
  if (o.scalars) o.scalars->check_fits(check_bits, size_t(pr.shape.num_tokens() * pr.shape.H));
  const auto positions = positions_by_sequence(pr, o);
  const int64_t items = pr.shape.num_sequences() * pr.shape.H;  // item i = (s, h) = (i / H, i % H)
  int64_t threads = o.threads > 0 ? o.threads : default_threads();
  threads = std::min(threads, items);
  // Boost 1.74's mpfr_float keeps its default precision in one process-wide variable, and
  // evaluating an expression changes it for the evaluation's duration
  // (detail::scoped_default_precision); a number constructed or a temporary made on another
  // thread meanwhile gets that precision. The Boost arithmetic therefore runs on one
  // thread (raw MPFR, the default, is thread-safe); without this,
  // reference_certification_test's RawAndBoostArithmeticGiveIdenticalBits failed about one
  // run in ten under load.
  if (std::is_same_v<Arith, BoostMpfr>) threads = 1;

  std::atomic<int64_t> next{0};
  // The failure reported is the one of the smallest failing item: items below it keep
  // running, items above it are skipped, so the error does not depend on the thread count.
  std::atomic<int64_t> first_failure{std::numeric_limits<int64_t>::max()};
  std::mutex failure_mutex;
  std::exception_ptr failure;
  int64_t failure_item = std::numeric_limits<int64_t>::max();
  TierCounts counts;  // sums of the workers' counts (under failure_mutex)

  auto worker = [&] {
    TierCounts mine;
    try {
      std::unique_ptr<FastPairRunner> fast;
      // A precision other than the default asks for the MPFR tier's certificate at that
      // precision (ssmv reference --precision): the fast tier stays out.
      if (o.tier == Tier::automatic && o.precision_bits == kDefaultPrecisionBits) {
        fast = std::make_unique<FastPairRunner>(pr, init, o, check_bits, positions, sink);
      }
      std::unique_ptr<PairRunner<Arith>> mpfr;  // built by the first pair that needs it
      for (;;) {
        const int64_t i = next.fetch_add(1);
        if (i >= items || i > first_failure.load()) break;
        try {
          const int64_t s = i / pr.shape.H, h = i % pr.shape.H;
          FastOutcome f;
          if (fast) f = fast->run(s, h);
          mine.fast_elements += f.elements;
          if (f.settled) {
            ++mine.fast_pairs;
            continue;
          }
          if (!mpfr) mpfr = std::make_unique<PairRunner<Arith>>(pr, init, o, check_bits, positions, sink);
          mine.mpfr_elements += mpfr->run(s, h, f.tokens_done, f.positions_done);
          ++mine.mpfr_pairs;
        } catch (...) {
          std::lock_guard<std::mutex> lock(failure_mutex);
          if (i < failure_item) {
            failure_item = i;
            failure = std::current_exception();
          }
          int64_t seen = first_failure.load();
          while (i < seen && !first_failure.compare_exchange_weak(seen, i)) {
          }
          sink.pair_failed();
          return;
        }
      }
    } catch (...) {  // a runner's construction (memory)
      std::lock_guard<std::mutex> lock(failure_mutex);
      if (!failure) failure = std::current_exception();
      first_failure.store(-1);
      sink.pair_failed();
      return;
    }
    std::lock_guard<std::mutex> lock(failure_mutex);
    counts.fast_pairs += mine.fast_pairs;
    counts.mpfr_pairs += mine.mpfr_pairs;
    counts.fast_elements += mine.fast_elements;
    counts.mpfr_elements += mine.mpfr_elements;
  };

  if (threads <= 1) {
    worker();
  } else {
    // MPFR keeps per-thread caches (constants such as log 2, exp's tables): a worker frees
    // its own before it ends, or they leak with the thread (LeakSanitizer sees them).
    std::vector<std::thread> pool;
    for (int64_t k = 0; k < threads; ++k) {
      pool.emplace_back([&worker] {
        worker();
        mpfr_free_cache2(MPFR_FREE_LOCAL_CACHE);
      });
    }
    for (auto& th : pool) th.join();
  }
  if (failure) std::rethrow_exception(failure);
  return counts;
}

}  // namespace

int checked_check_precision(const Problem& pr, const Options& o) {
  if (o.precision_bits < 24 || o.precision_bits > kMaxPrecisionBits) {
    bad_option("option 'precision_bits' = " + std::to_string(o.precision_bits) +
               ": must lie in [24, " + std::to_string(kMaxPrecisionBits) +
               "] (24 bits hold every input exactly)");
  }
  const int check = o.resolved_check_precision_bits();
  if (check <= o.precision_bits || check > kMaxPrecisionBits) {
    bad_option("option 'check_precision_bits' = " + std::to_string(o.check_precision_bits) +
               " (resolved " + std::to_string(check) + "): must exceed precision_bits = " +
               std::to_string(o.precision_bits) + " and be at most " +
               std::to_string(kMaxPrecisionBits));
  }
  if (o.certified_bits < 1) {
    bad_option("option 'certified_bits' = " + std::to_string(o.certified_bits) + ": must be positive");
  }
  if (o.tier != Tier::automatic && o.tier != Tier::mpfr_only) {
    bad_option("option 'tier' = " + std::to_string(int(o.tier)) + ": unknown (automatic or mpfr_only)");
  }
  if (o.threads < 0) {
    bad_option("option 'threads' = " + std::to_string(o.threads) + ": must be >= 0 (0: all cores)");
  }
  const int64_t T = pr.shape.num_tokens();
  for (size_t i = 0; i < o.state_positions.size(); ++i) {
    const int64_t q = o.state_positions[i];
    if (q < 1 || q > T) {
      bad_option("option 'state_positions'[" + std::to_string(i) + "] = " + std::to_string(q) +
                 ": must lie in [1, T = " + std::to_string(T) + "] (the state after token q-1)");
    }
  }
  return check;
}

namespace {

// Counts each token handed over as P·N state updates done (spec/progress.h): every token of
// every pair reaches the sink once, from whichever tier settled it.
class CountingSink : public Sink {
 public:
  CountingSink(Sink& inner, int64_t per_token) : inner_(inner), per_token_(per_token) {}
  void token(const TokenOutputs& out) override {
    progress::advance(per_token_);
    inner_.token(out);
  }
  void state(const StateOutputs& out) override { inner_.state(out); }
  void pair_failed() override { inner_.pair_failed(); }

 private:
  Sink& inner_;
  int64_t per_token_;
};

}  // namespace

TierCounts run(const Problem& pr, const InitialStates& init, const Options& o, Sink& sink) {
  const Shape& s = pr.shape;
  const progress::Phase phase("reference", s.num_tokens() * s.H * s.P * s.N, "state updates");
  CountingSink counting(sink, s.P * s.N);
  switch (o.arithmetic) {
    case Arithmetic::raw_mpfr: return run_with<RawMpfr>(pr, init, o, counting);
    case Arithmetic::boost_mpfr: return run_with<BoostMpfr>(pr, init, o, counting);
  }
  bad_option("option 'arithmetic' = " + std::to_string(int(o.arithmetic)) + ": unknown");
  return {};
}

}  // namespace ssmv::ref::detail

namespace ssmv::ref {

void set_default_threads(int n) {
  if (n < 0) throw std::invalid_argument("default threads = " + std::to_string(n) + ": must be >= 0 (0: all cores)");
  process_threads_setting() = n;
}

int default_threads() { return process_threads(); }

}  // namespace ssmv::ref
