// compute(), compute_streaming() and compute_decode(): validation, then the one driver
// (driver.cpp) with a sink that keeps what the caller asked for.
#include "reference/reference.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <limits>
#include <map>
#include <string>

#include "reference/driver.h"
#include "reference/gate_memo.h"
#include "reference/head_recurrence.h"
#include "reference/round.h"
#include "spec/parallel.h"
#include "spec/progress.h"

namespace ssmv::ref {

Bits ExactValues::rounded(Format f, size_t i) const {
  return round_nearest_even(f, value.at(i).backend().data());
}

void ExactValues::resize(size_t n, int precision_bits) {
  value.resize(n);
  for (Real& v : value) {
    mpfr_set_prec(v.backend().data(), precision_bits);
    mpfr_set_zero(v.backend().data(), 1);
  }
  nearest.assign(n, 0.0);
  magnitude.assign(n, 0.0);
  certified_error.assign(n, 0.0);
}

namespace {

// Stores one element of a streamed tensor into ExactValues (at the check precision, as the
// tier handed it: handed_value.h).
void store(ExactValues& v, size_t i, const HandedValue& value, double nearest, double magnitude,
           double certified_error) {
  set_value(v.value[i].backend().data(), value);
  v.nearest[i] = nearest;
  v.magnitude[i] = magnitude;
  v.certified_error[i] = certified_error;
}

// Keeps every output in an ExactResult. Different (sequence, head) pairs write disjoint
// elements, so the worker threads need no lock.
class ResultSink : public Sink {
 public:
  ResultSink(const Problem& pr, const Options& o, int check_bits, ExactResult& r)
      : pr_(pr), r_(r) {
    const Shape& sh = pr.shape;
    const int64_t T = sh.num_tokens(), hpn = sh.H * sh.P * sh.N, thp = T * sh.H * sh.P;
    r.precision_bits = o.precision_bits;
    r.check_precision_bits = check_bits;
    r.y.resize(thp, check_bits);
    for (auto* v : {&r.sum_abs_CS, &r.sum_abs_C_Sabs, &r.abs_Dx, &r.y_ungated}) v->assign(thp, 0.0);
    r.delta.assign(T * sh.H, 0.0);
    r.decay.assign(T * sh.H, 0.0);
    r.final_state.resize(sh.num_sequences() * hpn, check_bits);
    const auto& cu = sh.cu_seqlens;
    r.states_at.resize(o.state_positions.size());
    for (size_t k = 0; k < o.state_positions.size(); ++k) {
      const int64_t q = o.state_positions[k];
      r.states_at[k].position = q;
      r.states_at[k].sequence = (std::upper_bound(cu.begin(), cu.end(), q - 1) - cu.begin()) - 1;
      r.states_at[k].state.resize(hpn, check_bits);
      entries_at_[q].push_back(k);
    }
  }

  void token(const TokenOutputs& o) override {
    const int64_t P = pr_.shape.P;
    const size_t base = size_t(pr_.x_index(o.token, o.head, 0));
    for (int64_t p = 0; p < P; ++p) {
      store(r_.y, base + p, o.y[p], o.y_nearest[p], o.y_magnitude[p], o.y_certified_error[p]);
      r_.sum_abs_CS[base + p] = o.sum_abs_CS[p];
      r_.sum_abs_C_Sabs[base + p] = o.sum_abs_C_Sabs[p];
      r_.abs_Dx[base + p] = o.abs_Dx[p];
      r_.y_ungated[base + p] = o.y_ungated[p];
    }
    r_.delta[pr_.dt_index(o.token, o.head)] = o.delta;
    r_.decay[pr_.dt_index(o.token, o.head)] = o.decay;
  }

  void state(const StateOutputs& o) override {
    const int64_t pn = pr_.shape.P * pr_.shape.N;
    if (o.final) {
      put(r_.final_state, size_t(pr_.state_index(o.sequence, o.head, 0, 0)), o, pn);
    } else {
      for (size_t k : entries_at_.at(o.position)) put(r_.states_at[k].state, size_t(o.head * pn), o, pn);
    }
  }

 private:
  static void put(ExactValues& v, size_t base, const StateOutputs& o, int64_t pn) {
    for (int64_t i = 0; i < pn; ++i) {
      store(v, base + i, o.value[i], o.nearest[i], o.magnitude[i], o.certified_error[i]);
    }
  }
  const Problem& pr_;
  ExactResult& r_;
  std::map<int64_t, std::vector<size_t>> entries_at_;  // position q -> states_at entries
};

ExactResult run_and_keep(const Problem& problem, const detail::InitialStates& initial,
                         const Options& options, int check_bits) {
  ExactResult r;
  ResultSink sink(problem, options, check_bits, r);
  r.tiers = detail::run(problem, initial, options, sink);
  return r;
}

detail::InitialStates initial_from_problem(const Problem& problem) {
  detail::InitialStates init;
  const int64_t S = problem.shape.num_sequences();
  const int64_t hpn = problem.shape.state_elements_per_sequence();
  init.floats.assign(S, nullptr);
  if (problem.has_initial_state()) {
    for (int64_t s = 0; s < S; ++s) init.floats[s] = problem.initial_state.data() + s * hpn;
  }
  return init;
}

}  // namespace

ExactResult compute(const Problem& problem, const Options& options) {
  validate(problem);
  const int check_bits = detail::checked_check_precision(problem, options);
  return run_and_keep(problem, initial_from_problem(problem), options, check_bits);
}

ExactResult compute_from_state(const Problem& problem, const ExactValues& initial_state,
                               const Options& options) {
  validate(problem);
  const int check_bits = detail::checked_check_precision(problem, options);
  if (problem.has_initial_state()) {
    throw ProblemError(
        "problem field 'initial_state' must be empty when a full-precision initial state is given");
  }
  const size_t n = size_t(problem.shape.num_sequences() * problem.shape.state_elements_per_sequence());
  if (initial_state.value.size() != n || initial_state.magnitude.size() != n) {
    throw ProblemError("full-precision initial state has " + std::to_string(initial_state.value.size()) +
                       " values and " + std::to_string(initial_state.magnitude.size()) +
                       " magnitudes; shape [S, H, P, N] needs " + std::to_string(n));
  }
  for (size_t i = 0; i < n; ++i) {
    if (!mpfr_number_p(initial_state.value[i].backend().data()) || !(initial_state.magnitude[i] >= 0)) {
      throw ProblemError("full-precision initial state element " + std::to_string(i) +
                         " is not finite or has a magnitude that is not >= 0");
    }
  }
  detail::InitialStates init;
  init.floats.assign(problem.shape.num_sequences(), nullptr);
  init.exact = &initial_state;
  return run_and_keep(problem, init, options, check_bits);
}

void compute_streaming(const Problem& problem, Sink& sink, const Options& options) {
  if (!options.validated) validate(problem);
  detail::checked_check_precision(problem, options);
  detail::run(problem, initial_from_problem(problem), options, sink);
}

ExactScalars compute_scalars(const Problem& problem, const Options& options) {
  if (!options.validated) validate(problem);
  const int check_bits = detail::checked_check_precision(problem, options);
  const int64_t T = problem.shape.num_tokens(), H = problem.shape.H;
  ExactScalars out;
  out.check_bits = check_bits;
  // Two MPFR operations per (token, head) at the check precision: 262,144 pairs for a
  // 8192-token prompt of 32 heads, seconds on one core. A pair's values are a function of its
  // head and its dt alone (dt_bias and A are per head, the options global), and a bf16 dt takes
  // at most 2^16 values, which a long prompt repeats: so each head's distinct dt values are
  // listed first (with a token that holds each), their values computed once, in blocks on the
  // workers, and kept once; every pair names its (head, dt)'s entry. Every value is computed
  // alone (no state carried between tokens), so the bits are the same for any thread count.
  const int64_t pairs = T * H;
  const progress::Phase phase("δ and decay", pairs, "token·heads");
  const int64_t workers = options.threads > 0 ? options.threads : default_threads();
  struct Distinct {
    uint32_t dt_bits;
    int64_t token;  // a token of the head whose dt has these bits
    bool operator<(const Distinct& o) const { return dt_bits < o.dt_bits; }
  };
  std::vector<std::vector<Distinct>> distinct(static_cast<size_t>(H));  // [H] sorted by dt_bits, unique
  for_each_task(H, workers, [&](int64_t h, int64_t) {
    std::vector<Distinct>& d = distinct[size_t(h)];
    d.reserve(size_t(T));
    for (int64_t t = 0; t < T; ++t) d.push_back({std::bit_cast<uint32_t>(problem.dt[problem.dt_index(t, h)]), t});
    std::stable_sort(d.begin(), d.end());
    d.erase(std::unique(d.begin(), d.end(), [](const Distinct& a, const Distinct& b) { return a.dt_bits == b.dt_bits; }),
            d.end());
  });
  std::vector<int64_t> first(static_cast<size_t>(H + 1), 0);  // distinct[h]'s values start at first[h]
  for (int64_t h = 0; h < H; ++h) first[size_t(h + 1)] = first[size_t(h)] + int64_t(distinct[size_t(h)].size());
  const size_t entries = size_t(first[size_t(H)]);
  if (entries > size_t(std::numeric_limits<uint32_t>::max())) {
    throw std::invalid_argument("compute_scalars: " + std::to_string(entries) +
                                " distinct (head, dt) values do not fit a 32-bit index");
  }
  for (std::vector<double>* v : {&out.delta, &out.decay, &out.delta_lo, &out.decay_lo, &out.delta_up, &out.decay_up}) {
    v->assign(entries, 0.0);
  }
  constexpr int64_t kBlock = 256;  // values per task: a few milliseconds of MPFR
  const int64_t blocks = (first[size_t(H)] + kBlock - 1) / kBlock;
  std::atomic<int64_t> next{0};
  const int64_t threads = std::min<int64_t>(workers, std::max<int64_t>(1, blocks));
  for_each_task(threads, threads, [&](int64_t, int64_t) {
    {
      TokenScalars<RawMpfr> scalars(check_bits, 0);
      mpfr_t scratch;
      mpfr_init2(scratch, check_bits);
      const double nan = std::numeric_limits<double>::quiet_NaN();
      for (int64_t b = next++; b < blocks; b = next++) {
        const int64_t end = std::min(first[size_t(H)], (b + 1) * kBlock);
        int64_t h = int64_t(std::upper_bound(first.begin(), first.end(), b * kBlock) - first.begin()) - 1;
        for (int64_t j = b * kBlock; j < end; ++j) {
          while (j >= first[size_t(h + 1)]) ++h;
          scalars.step(problem, distinct[size_t(h)][size_t(j - first[size_t(h)])].token, h, false);
          const mpfr_srcptr d = scalars.delta(), a = scalars.decay();
          const dd::DD dd_d = detail::dd_of(d, scratch), dd_a = detail::dd_of(a, scratch);
          const size_t e = size_t(j);
          out.delta[e] = mpfr_get_d(d, MPFR_RNDN);
          out.decay[e] = mpfr_get_d(a, MPFR_RNDN);
          out.delta_lo[e] = dd_d.lo;
          out.decay_lo[e] = dd_a.lo;
          out.delta_up[e] = mpfr_number_p(d) ? std::fabs(mpfr_get_d(d, MPFR_RNDA)) : nan;
          out.decay_up[e] = mpfr_number_p(a) && !mpfr_zero_p(a) ? std::fabs(mpfr_get_d(a, MPFR_RNDA)) : nan;
        }
      }
      mpfr_clear(scratch);
    }
    // MPFR's per-thread caches leak with a worker thread unless it frees them (the driver's
    // pool does the same); on the calling thread they are rebuilt when next needed.
    mpfr_free_cache2(MPFR_FREE_LOCAL_CACHE);
  });
  // Every pair names its (head, dt)'s entry, in blocks of tokens.
  out.entry.assign(size_t(T * H), 0);
  constexpr int64_t kTokens = 1024;
  for_each_task((T + kTokens - 1) / kTokens, workers, [&](int64_t b, int64_t) {
    for (int64_t t = b * kTokens; t < std::min(T, (b + 1) * kTokens); ++t) {
      for (int64_t h = 0; h < H; ++h) {
        const size_t k = size_t(problem.dt_index(t, h));
        const std::vector<Distinct>& d = distinct[size_t(h)];
        const Distinct key{std::bit_cast<uint32_t>(problem.dt[k]), 0};
        out.entry[k] = uint32_t(first[size_t(h)] + (std::lower_bound(d.begin(), d.end(), key) - d.begin()));
      }
    }
    progress::advance(std::min(kTokens, T - b * kTokens) * H);
  });
  return out;
}

void ExactScalars::check_fits(int bits, size_t run_pairs) const {
  auto refuse = [](const std::string& what) { throw std::invalid_argument("reference: Options::scalars: " + what); };
  if (check_bits != bits) {
    refuse("computed at " + std::to_string(check_bits) + " bits; this run's check precision is " +
           std::to_string(bits) + " bits");
  }
  if (pairs() != run_pairs) {
    refuse("'entry' holds " + std::to_string(pairs()) + " (token, head) pairs; this run has " +
           std::to_string(run_pairs));
  }
  const size_t n = delta.size();
  const std::pair<const char*, const std::vector<double>*> tables[] = {
      {"decay", &decay}, {"delta_lo", &delta_lo}, {"decay_lo", &decay_lo}, {"delta_up", &delta_up},
      {"decay_up", &decay_up}};
  for (const auto& [name, v] : tables) {
    if (v->size() != n) {
      refuse(std::string("table '") + name + "' holds " + std::to_string(v->size()) + " values, 'delta' " +
             std::to_string(n));
    }
  }
  const auto bad = std::find_if(entry.begin(), entry.end(), [n](uint32_t e) { return e >= n; });
  if (bad != entry.end()) {
    refuse("'entry' of pair " + std::to_string(bad - entry.begin()) + " = " + std::to_string(*bad) +
           " is outside the tables' " + std::to_string(n) + " values");
  }
}

ExactDecodeResult compute_decode(const DecodeProblem& decode, const Options& options) {
  validate(decode);
  const Problem& pr = decode.problem;
  const int check_bits = detail::checked_check_precision(pr, options);
  const int64_t S = pr.shape.num_sequences();
  const int64_t hpn = pr.shape.state_elements_per_sequence();

  detail::InitialStates init;
  init.floats.assign(S, nullptr);
  for (int64_t s = 0; s < S; ++s) {
    if (!decode.is_pad(s)) init.floats[s] = decode.state_pool.data() + decode.slot_in[s] * hpn;
  }
  ExactDecodeResult out;
  out.result = run_and_keep(pr, init, options, check_bits);

  // The pool after the step: every slot as given (exact, magnitude |value|), then each
  // non-pad request's final state written to its out slot.
  ExactValues& pool = out.state_pool;
  pool.resize(decode.state_pool.size(), check_bits);
  for (size_t i = 0; i < decode.state_pool.size(); ++i) {
    const double v = decode.state_pool[i];
    mpfr_set_d(pool.value[i].backend().data(), v, MPFR_RNDN);  // exact: a state-format value
    pool.nearest[i] = v;
    pool.magnitude[i] = std::fabs(v);
  }
  const ExactValues& fin = out.result.final_state;
  for (int64_t s = 0; s < S; ++s) {
    if (decode.is_pad(s)) continue;
    const size_t dst = size_t(decode.out_slot(s) * hpn), src = size_t(s * hpn);
    for (int64_t i = 0; i < hpn; ++i) {
      mpfr_set(pool.value[dst + i].backend().data(), fin.value[src + i].backend().data(), MPFR_RNDN);
      pool.nearest[dst + i] = fin.nearest[src + i];
      pool.magnitude[dst + i] = fin.magnitude[src + i];
      pool.certified_error[dst + i] = fin.certified_error[src + i];
    }
  }
  return out;
}

}  // namespace ssmv::ref
