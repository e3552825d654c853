#include "reference/driver.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

#include "reference/arithmetic.h"
#include "reference/certify.h"
#include "reference/head_recurrence.h"
#include "reference/magnitude.h"
#include "reference/tiered.h"

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

// One worker: both runs of one (sequence, head) pair at a time, reusing every variable.
template <class Arith>
class PairRunner {
 public:
  PairRunner(const Problem& pr, const InitialStates& init, const Options& o, int check_bits,
             const std::vector<std::vector<int64_t>>& positions, Sink& sink)
      : pr_(pr), init_(init), positions_(positions), sink_(sink), P_(pr.shape.P),
        N_(pr.shape.N), primary_(o.precision_bits, P_, N_), check_(check_bits, P_, N_),
        mag_(P_, N_), cert_(o.certified_bits, o.precision_bits, check_bits), y_ptr_(P_),
        state_ptr_(P_ * N_), init_ptr_(P_ * N_), y_nearest_(P_), y_err_(P_), ungated_nearest_(P_),
        sum_abs_cs_(P_), gate_up_(P_), state_nearest_(P_ * N_), state_err_(P_ * N_) {
    for (int64_t p = 0; p < P_; ++p) y_ptr_[p] = check_.y(p);
    for (int64_t i = 0; i < P_ * N_; ++i) state_ptr_[i] = check_.state(i);
  }

  // Runs pair (s, h) from its first token; hands over neither the first `skip_tokens`
  // tokens nor the states of the first `skip_positions` requested positions (the fast
  // tier handed them over already). Returns the number of elements handed over.
  int64_t run(int64_t s, int64_t h, int64_t skip_tokens = 0, size_t skip_positions = 0) {
    load(s, h);
    const auto& cu = pr_.shape.cu_seqlens;
    const auto& positions = positions_[s];
    size_t next_position = 0;
    int64_t handed = 0;
    for (int64_t t = cu[s]; t < cu[s + 1]; ++t) {
      const bool emit = t - cu[s] >= skip_tokens;
      token(s, t, h, emit);
      handed += emit ? P_ : 0;
      if (next_position < positions.size() && positions[next_position] == t + 1) {
        const bool emit_state = next_position >= skip_positions;
        state(s, h, t + 1, false, emit_state);
        handed += emit_state ? P_ * N_ : 0;
        ++next_position;
      }
    }
    state(s, h, cu[s + 1], true, true);
    return handed + P_ * N_;
  }

 private:
  void load(int64_t s, int64_t h) {
    const int64_t hpn = P_ * N_;
    if (init_.exact) {
      const int64_t base = (s * pr_.shape.H + h) * hpn;
      for (int64_t i = 0; i < hpn; ++i) init_ptr_[i] = init_.exact->value[base + i].backend().data();
      primary_.load(init_ptr_.data());
      check_.load(init_ptr_.data());
      mag_.load(&init_.exact->magnitude[base]);
    } else if (const float* f = init_.floats[s]) {
      primary_.load(f + h * hpn);
      check_.load(f + h * hpn);
      mag_.load(f + h * hpn);
    } else {
      primary_.load_zero();
      check_.load_zero();
      mag_.load_zero();
    }
  }

  void token(int64_t s, int64_t t, int64_t h, bool emit) {
    primary_.step(pr_, t, h, nullptr);
    check_.step(pr_, t, h, sum_abs_cs_.data());
    Coordinates at;
    at.sequence = s;
    at.token = t;
    at.head = h;
    const double delta_up = abs_up(check_.delta());
    const double decay_up = abs_up(check_.decay());
    cert_.check("delta", at, primary_.delta(), check_.delta(), delta_up);
    cert_.check("decay", at, primary_.decay(), check_.decay(), decay_up);
    const bool has_z = pr_.has_z();
    if (has_z) {
      for (int64_t p = 0; p < P_; ++p) {
        at.dim = p;
        gate_up_[p] = abs_up(check_.gate(p));
        cert_.check("gate z*sigmoid(z)", at, primary_.gate(p), check_.gate(p), gate_up_[p]);
      }
    }
    mag_.step(pr_, t, h, delta_up, decay_up, has_z ? gate_up_.data() : nullptr);
    for (int64_t p = 0; p < P_; ++p) {
      at.dim = p;
      cert_.check("y_ungated", at, primary_.y_ungated(p), check_.y_ungated(p), mag_.y_ungated()[p]);
      y_err_[p] = cert_.check("y", at, primary_.y(p), check_.y(p), mag_.y()[p]);
      y_nearest_[p] = mpfr_get_d(check_.y(p), MPFR_RNDN);
      ungated_nearest_[p] = mpfr_get_d(check_.y_ungated(p), MPFR_RNDN);
    }
    TokenOutputs out;
    out.sequence = s;
    out.token = t;
    out.head = h;
    out.delta = mpfr_get_d(check_.delta(), MPFR_RNDN);
    out.decay = mpfr_get_d(check_.decay(), MPFR_RNDN);
    out.y = y_ptr_;
    out.y_nearest = y_nearest_;
    out.y_magnitude = {mag_.y(), size_t(P_)};
    out.y_certified_error = y_err_;
    out.sum_abs_CS = sum_abs_cs_;
    out.sum_abs_C_Sabs = {mag_.sum_abs_c_sabs(), size_t(P_)};
    out.abs_Dx = {mag_.abs_dx(), size_t(P_)};
    out.y_ungated = ungated_nearest_;
    if (emit) sink_.token(out);
  }

  void state(int64_t s, int64_t h, int64_t q, bool final, bool emit) {
    Coordinates at;
    at.sequence = s;
    at.head = h;
    at.position = q;
    const char* tensor = final ? "final_state" : "state_at";
    for (int64_t p = 0; p < P_; ++p) {
      at.state_p = p;
      for (int64_t n = 0; n < N_; ++n) {
        at.state_n = n;
        const int64_t i = p * N_ + n;
        state_err_[i] = cert_.check(tensor, at, primary_.state(i), check_.state(i), mag_.state()[i]);
        state_nearest_[i] = mpfr_get_d(check_.state(i), MPFR_RNDN);
      }
    }
    StateOutputs out;
    out.sequence = s;
    out.head = h;
    out.position = q;
    out.final = final;
    out.value = state_ptr_;
    out.nearest = state_nearest_;
    out.magnitude = {mag_.state(), size_t(P_ * N_)};
    out.certified_error = state_err_;
    if (emit) sink_.state(out);
  }

  const Problem& pr_;
  const InitialStates& init_;
  const std::vector<std::vector<int64_t>>& positions_;
  Sink& sink_;
  int64_t P_, N_;
  HeadRecurrence<Arith> primary_, check_;
  MagnitudeRecurrence mag_;
  Certifier cert_;
  std::vector<mpfr_srcptr> y_ptr_, state_ptr_, init_ptr_;  // [P], [P, N], [P, N]
  std::vector<double> y_nearest_, y_err_, ungated_nearest_, sum_abs_cs_, gate_up_;  // [P]
  std::vector<double> state_nearest_, state_err_;                                   // [P, N]
};

template <class Arith>
TierCounts run_with(const Problem& pr, const InitialStates& init, const Options& o, Sink& sink) {
  const int check_bits = o.resolved_check_precision_bits();
  const auto positions = positions_by_sequence(pr, o);
  const int64_t items = pr.shape.num_sequences() * pr.shape.H;  // item i = (s, h) = (i / H, i % H)
  int64_t threads = o.threads > 0 ? o.threads : default_threads();
  threads = std::min(threads, items);

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
          return;
        }
      }
    } catch (...) {  // a runner's construction (memory)
      std::lock_guard<std::mutex> lock(failure_mutex);
      if (!failure) failure = std::current_exception();
      first_failure.store(-1);
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

TierCounts run(const Problem& pr, const InitialStates& init, const Options& o, Sink& sink) {
  switch (o.arithmetic) {
    case Arithmetic::raw_mpfr: return run_with<RawMpfr>(pr, init, o, sink);
    case Arithmetic::boost_mpfr: return run_with<BoostMpfr>(pr, init, o, sink);
  }
  bad_option("option 'arithmetic' = " + std::to_string(int(o.arithmetic)) + ": unknown");
  return {};
}

}  // namespace ssmv::ref::detail

namespace ssmv::ref {
namespace {
std::atomic<int> g_default_threads{0};  // 0: every core
}  // namespace

void set_default_threads(int n) {
  if (n < 0) throw std::invalid_argument("default threads = " + std::to_string(n) + ": must be >= 0 (0: all cores)");
  g_default_threads = n;
}

int default_threads() {
  const int n = g_default_threads;
  return n > 0 ? n : int(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace ssmv::ref
