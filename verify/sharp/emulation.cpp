// The recurrence in double with a configuration's roundings (emulation.h); the noise model
// is derived in docs/sharp-verdicts.md ("the noise model"), numbered [N1]–[N4] below.
#include "verify/sharp/emulation.h"
#include "verify/sharp/model_exp.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>

#include "spec/format.h"
#include "spec/splitmix.h"
#include "spec/rows_product.h"
#include "spec/vector_clones.h"

namespace ssmv::sharp {

std::string_view site_name(Site s) {
  switch (s) {
    case Site::dt_scaled_B: return "dt_scaled_B";
    case Site::decayed_CB: return "decayed_CB";
    case Site::incoming_state: return "incoming_state";
    case Site::final_incoming_state: return "final_incoming_state";
    case Site::delta: return "delta";
    case Site::dB: return "dB";
    case Site::cumsum: return "cumsum";
    case Site::running_state: return "running_state";
    case Site::inter_term: return "inter_term";
    case Site::state_via: return "state_via";
  }
  return "?";
}

Emulation declared_emulation(const Contract& c, const Formats& f, int64_t tokens_per_launch) {
  Emulation e;
  e.state = f.state;
  e.output = f.output;
  e.tokens_per_launch = c.family == Family::sequential ? tokens_per_launch : 1;
  const int acc_precision = format_info(c.accumulation).precision;
  for (const Rounding& r : c.roundings) {
    const Format fmt = resolve(r.format, f.input, f.state, f.output);
    const bool coarser = format_info(fmt).precision < acc_precision;
    switch (r.point) {
      case Point::dt_scaled_B: if (coarser) e.at(Site::dt_scaled_B) = fmt; break;
      case Point::decayed_CB: if (coarser) e.at(Site::decayed_CB) = fmt; break;
      case Point::incoming_state: if (coarser) e.at(Site::incoming_state) = fmt; break;
      case Point::final_incoming_state: if (coarser) e.at(Site::final_incoming_state) = fmt; break;
      case Point::stored_state:
        if (fmt != f.state && coarser) e.at(Site::state_via) = fmt;  // rounded there, then stored
        if (fmt == f.state) e.stochastic_state = r.mode == RoundingMode::stochastic;
        break;
      case Point::output:
        if (fmt == f.output) e.stochastic_output = r.mode == RoundingMode::stochastic;
        break;
    }
  }
  return e;
}

namespace {

constexpr double kU = 0x1p-24;         // fp32's unit roundoff: every noisy rounding is fp32
constexpr double kUlp32PerValue = 0x1p-23;  // ulp_fp32(v) ≤ 2^-23·|v| for a normal v

// splitmix64: a counter-based stream per (seed, sequence, head), so that the draws of a unit
// do not depend on which thread runs it.
class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed) {}
  uint64_t next() { return splitmix64_next(s_); }
  // Moves past n draws (the stream is counter-based: the state of draw k is s + k·γ).
  void skip(uint64_t n) { s_ += n * kSplitMixGamma; }
  double uniform() { return double(next() >> 11) * 0x1p-53; }  // [0, 1)
  // A sum's noise ([N3]): the Irwin–Hall sum of four uniforms from the four 16-bit parts of
  // one draw, centred and scaled to variance 1 (each part's variance is (2^32 − 1)/12 in units
  // of 2^-32). It is itself a sum of bounded errors, as a sum's rounding error is, costs one
  // draw instead of a logarithm and a cosine (these were a fifth of the emulation's time), and
  // is integer arithmetic up to the last scaling, so the same on every machine and libm.
  double gauss() { return gauss_of(next()); }
  // out[i] = acc[i] + (bias[i] + sd[i]·gauss()) for i < n, the Gaussians drawn in order: the
  // stream is counter-based (draw k of a stream at state s is mix(s + k·γ)), so each draw is
  // formed from its index and the loop vectorises — the same draws as n calls of gauss(), where
  // the one-by-one draws had been two fifths of a chunked run's own loops.
  SSMV_VECTOR_CLONES void add_gauss(const double* acc, const double* __restrict bias,
                                    const double* __restrict sd, int64_t n, double* out) {
    const uint64_t s0 = s_;
    for (int64_t i = 0; i < n; ++i) {
      const double g = gauss_of(splitmix64_mix(s0 + uint64_t(i + 1) * kSplitMixGamma));
      out[i] = acc[i] + (bias[i] + sd[i] * g);
    }
    s_ = s0 + uint64_t(n) * kSplitMixGamma;
  }
  // out[i] = the high 32 bits of next(), with the lowest bit set (a nonzero xorshift32 seed),
  // for i < n: the same draws as n calls of next(), formed from their index (as add_gauss).
  SSMV_VECTOR_CLONES void odd_high_words(uint32_t* __restrict out, int64_t n) {
    const uint64_t s0 = s_;
    for (int64_t i = 0; i < n; ++i) out[i] = uint32_t(splitmix64_mix(s0 + uint64_t(i + 1) * kSplitMixGamma) >> 32) | 1u;
    s_ = s0 + uint64_t(n) * kSplitMixGamma;
  }

 private:
  // One draw's Gaussian: (Σ − 2)·√3 of its four 16-bit parts as uniforms (k + 1/2)/2^16.
  static double gauss_of(uint64_t z) {
    const uint64_t parts = (z & 0xffff) + ((z >> 16) & 0xffff) + ((z >> 32) & 0xffff) + (z >> 48);  // < 2^18
    const double sum = double(uint32_t(parts)) + 2.0;
    return (sum * 0x1p-16 - 2.0) * 1.7320508075688772;
  }
  uint64_t s_;
};

// 2·u − 1 in (−1, 1), u = Rng(key).uniform() (its first draw) with the same bits, written as a
// branch-free function of the key so that loops over arrays of keys vectorise: the uniform
// (z >> 11)·2^-53 is formed from the draw's bits — 1 + (z >> 12)·2^-52, minus 1, plus the last
// bit's 2^-53, each step exact — instead of an int64 → double conversion, which AVX2 lacks.
inline double sym_of_key(uint64_t key) {
  const uint64_t u53 = splitmix64(key) >> 11;
  const double one_plus = std::bit_cast<double>(0x3ff0000000000000ull | (u53 >> 1));
  const double uniform = (one_plus - 1.0) + ((u53 & 1) ? 0x1p-53 : 0.0);
  return 2.0 * uniform - 1.0;
}

uint64_t unit_seed(uint64_t seed, int64_t sequence, int64_t head) {
  Rng r(seed ^ (uint64_t(sequence) * 0xd1b54a32d192ed03ull) ^ (uint64_t(head) * 0xabc98388fb8fac03ull));
  return r.next();
}

// Rounds to f toward zero (|result| ≤ |v|).
double round_toward_zero(Format f, double v) {
  const Bits b = round_nearest_even(f, v);
  const double r = decode(f, b);
  if (std::fabs(r) <= std::fabs(v) || std::isinf(r)) return r;
  return decode(f, v > 0 ? next_down(f, b) : next_up(f, b));
}

// Rounds to f stochastically: to one of the two neighbours of v, the upper with probability
// (v − lo)/(hi − lo), so that the mean is v.
double round_stochastically(Format f, double v, Rng& rng) {
  const Bits b = round_nearest_even(f, v);
  const double r = decode(f, b);
  if (r == v || std::isinf(r)) return r;
  const double other = decode(f, r > v ? next_down(f, b) : next_up(f, b));
  const double lo = std::min(r, other), hi = std::max(r, other);
  return rng.uniform() < (v - lo) / (hi - lo) ? hi : lo;
}

// The noise of one run and the contract's budgets it draws from ([N1]–[N2]).
class Model {
 public:
  Model(const Contract& c, const Noise& n, int64_t sequence, int64_t head)
      : on_(n.on), run_seed_(n.seed), rng_(on_ ? unit_seed(n.seed, sequence, head) : 0) {
    for (const TranscendentalBudget& b : c.transcendentals) {
      if (b.function == "exp") exp_ = &b;
      if (b.function == "softplus") softplus_ = &b;
      if (b.function == "sigmoid") sigmoid_ = &b;
    }
  }
  bool on() const { return on_; }
  Rng& rng() { return rng_; }

  // [N1] One fp32 rounding of v: a uniform error in ±u|v|, at least the half ULP of
  // round-to-nearest (an ULP is at most 2u|v|), so its variance u²v²/3 bounds RN's from above.
  // The draw is a function of v within a run: a kernel that rounds the same value twice makes
  // the same error twice (δ·A of a clamped δ, token after token), and errors that repeat add
  // up linearly, not as a random walk — independent draws understated that 16-fold over a
  // chunk of 256 clamped tokens.
  double rounded(double v) { return on_ ? v + keyed_sym(v, kRoundSalt) * kU * std::fabs(v) : v; }
  // rounded(v[i]) for i < n, in place: the same bits, in a loop that vectorises (the sharp
  // runs' chunked stages round hundreds of thousands of values per chunk).
  SSMV_VECTOR_CLONES void round_all(double* __restrict v, int64_t n) const {
    if (!on_) return;
    const uint64_t k0 = key_base(kRoundSalt);
    for (int64_t i = 0; i < n; ++i) v[i] = v[i] + sym_of_key(k0 ^ key_bits(v[i])) * kU * std::fabs(v[i]);
  }

  // [N2] A transcendental: an error of the budget's full size at its argument, of random
  // sign. A deterministic function's error may sit near its budget for every argument a
  // kernel feeds it (FlashInfer's __logf(1 + __expf(v)) on realistic v), so the model takes
  // the largest mean square any error within the budget can have, not a uniform draw's third.
  // The sign is a function of the argument within a run, as [N1].
  // The exact value is model_exp's (model_exp.h: within 1 ulp of double, the same bits on every
  // machine, and it vectorises).
  double exp(double arg) { return budgeted(exp_, arg, model_exp(arg), kExpSalt); }
  // exp(arg[i]) into out[i] for i < n, then the budget's noise, in loops that vectorise (the
  // same bits as exp()).
  SSMV_VECTOR_CLONES void exp_all(const double* __restrict arg, double* __restrict out, int64_t n) const {
    for (int64_t i = 0; i < n; ++i) out[i] = model_exp(arg[i]);
    budgeted_all(exp_, arg, out, n, kExpSalt);
  }
  // sigmoid(v[i]) into out[i] for i < n, as exp_all.
  SSMV_VECTOR_CLONES void sigmoid_all(const double* __restrict v, double* __restrict out, int64_t n) const {
    for (int64_t i = 0; i < n; ++i) out[i] = 1.0 / (1.0 + model_exp(-v[i]));
    budgeted_all(sigmoid_, v, out, n, kSigmoidSalt);
  }
  double softplus(double v) { return budgeted(softplus_, v, v > 40 ? v : std::log1p(model_exp(v)), 0x165667b1u); }
  double sigmoid(double v) { return budgeted(sigmoid_, v, 1.0 / (1.0 + model_exp(-v)), kSigmoidSalt); }

 private:
  static constexpr uint64_t kRoundSalt = 0x5bd1e995u, kExpSalt = 0x27d4eb2du, kSigmoidSalt = 0x9e3779b1u;
  // A number in (−1, 1) determined by (run seed, salt, the bits of v): sym_of_key of
  // run seed ^ salt·c ^ bits(v). splitmix64's finalizer carries every key bit into every bit
  // of the draw, so v's bits go in as they are (multiplying them by φ first had been a third
  // of each draw's 64-bit multiplies, which AVX-512 issues at several cycles each).
  uint64_t key_base(uint64_t salt) const { return run_seed_ ^ (salt * 0xc2b2ae3d27d4eb4full); }
  static uint64_t key_bits(double v) { return std::bit_cast<uint64_t>(v); }
  double keyed_sym(double v, uint64_t salt) const { return sym_of_key(key_base(salt) ^ key_bits(v)); }
  // The budget's noise on one exact value: budgeted_all of one element.
  double budgeted(const TranscendentalBudget* b, double arg, double exact, uint64_t salt) const {
    budgeted_all(b, &arg, &exact, 1, salt);
    return exact;
  }
  // The budget's noise on the exact values out[i] of the arguments arg[i], in place: an error
  // of the budget's full width at the argument, its sign the argument's keyed draw.
  void budgeted_all(const TranscendentalBudget* b, const double* __restrict arg, double* __restrict out, int64_t n,
                    uint64_t salt) const {
    if (!on_ || b == nullptr) return;
    const uint64_t k0 = key_base(salt);
    const double c = b->ulp_const, per = b->ulp_per_abs_arg, abs_error = b->abs_error;
    for (int64_t i = 0; i < n; ++i) {
      const double a = std::fabs(arg[i]);
      const double ulps = c + per * (std::isfinite(a) ? a : 0.0);
      const double width = ulps * kUlp32PerValue * std::fabs(out[i]) + abs_error;
      out[i] = out[i] + (sym_of_key(k0 ^ key_bits(arg[i])) < 0 ? -width : width);
    }
  }

  bool on_;
  uint64_t run_seed_;
  Rng rng_;
  const TranscendentalBudget *exp_ = nullptr, *softplus_ = nullptr, *sigmoid_ = nullptr;
};

// [N3] The noise of n sums evaluated side by side (a row of y, a row of C·Bᵀ, a chunk
// state), fed their terms in order. Associative and FMA orders: each term one rounding at the
// running magnitude plus one of its product (sequential is the deepest order a contract allows;
// its variance bounds the others'), variance u²(s_j² + t_j²)/3. Tensor-core steps of 16
// (mma_m16n8k16): each step's result rounded toward zero, an error of mean −u·|s|·sign(s) and
// variance u²s²/3 (uniform over [0, 2u|s|) toward zero), plus the 17 truncations below 2^-25
// of the step's largest addend (variance 17·(2^-25·m)²/3, m taken as the larger of the step's
// partial sums at its ends). With the noise's model off only the sums are formed: a run that
// draws its noise from figures formed elsewhere (finish_with) adds no variance of its own. The
// loops run over the n sums, so they vectorise (the terms of one sum stay in order).
class ParallelSums {
 public:
  explicit ParallelSums(ReductionOrder order) : mma_(order == ReductionOrder::mma_m16n8k16) {}
  // n sums starting from zero; `model`: form their noise's variance and bias as the terms come.
  void reset(int64_t n, bool model) {
    n_ = n;
    on_ = model;
    acc_.assign(n, 0.0);
    restart();
  }
  // The same n sums again, starting from the values finish() left (a second reduction that
  // adds onto the first's result).
  void restart() {
    steps_ = 0;
    if (!on_) return;
    var_.assign(n_, 0.0);
    if (mma_) {
      bias_.assign(n_, 0.0);
      last_.assign(acc_.begin(), acc_.end());
    }
  }
  // Term j of every sum i, acc[i] += a[j]·v[j·stride + i], for j in [0, count): the terms of
  // one sum stay in order. Up to four terms are added per pass over the sums (one load and
  // store of each accumulator per four terms instead of per term: the loops were bound by
  // those), never across a tensor-core step, so the bits are those of adding them one by one.
  SSMV_VECTOR_CLONES void add_terms(const double* a, const double* v, int64_t stride, int64_t count) {
    for (int64_t j = 0; j < count;) {
      const int64_t b = block(count - j);
      switch (b) {
        case 4: add_block<4>(a + j, v + j * stride, stride); break;
        case 3: add_block<3>(a + j, v + j * stride, stride); break;
        case 2: add_block<2>(a + j, v + j * stride, stride); break;
        default: add_block<1>(a + j, v + j * stride, stride); break;
      }
      j += b;
      stepped(b);
    }
  }
  // The P·N sums of outer products, acc[p·N + n] += x[j·P + p]·v[j·N + n] for j in [0, count):
  // one term each per j, blocked as add_terms.
  SSMV_VECTOR_CLONES void add_outer_terms(const double* x, const double* v, int64_t P, int64_t N, int64_t count) {
    for (int64_t j = 0; j < count;) {
      const int64_t b = block(count - j);
      switch (b) {
        case 4: add_outer_block<4>(x + j * P, v + j * N, P, N); break;
        case 3: add_outer_block<3>(x + j * P, v + j * N, P, N); break;
        case 2: add_outer_block<2>(x + j * P, v + j * N, P, N); break;
        default: add_outer_block<1>(x + j * P, v + j * N, P, N); break;
      }
      j += b;
      stepped(b);
    }
  }
  // The sums with the noise their model gives (Rng: one Gaussian per sum); without the model,
  // the sums.
  double* finish(Rng& rng) {
    if (on_) {
      settle();
      draw(acc_.data(), bias_.data(), sd_.data(), n_, rng, acc_.data());
    }
    return acc_.data();
  }
  // n sums without the noise's model, formed by the caller into the array returned (their
  // terms in order from zero, as add_terms would add them: a product of spec/rows_product.h).
  double* reset_formed(int64_t n) {
    reset(n, false);
    return acc_.data();
  }
  // The noise model's figures into bias[i] and sd[i] for i < n (settle()), and the sums without
  // noise: what the noise-free run of a chunked emulation hands its noisy runs.
  double* model_into(double* bias, double* sd) {
    settle();
    std::copy_n(bias_.data(), n_, bias);
    std::copy_n(sd_.data(), n_, sd);
    return acc_.data();
  }
  // The sums with noise of the bias and sd handed in (one Gaussian per sum, as finish()).
  double* finish_with(Rng& rng, const double* bias, const double* sd) {
    draw(acc_.data(), bias, sd, n_, rng, acc_.data());
    return acc_.data();
  }
  // Without drawing: once the last term is in, sum i's value is acc[i] and its noise is
  // bias[i] + sd[i]·gauss (bias 0 and sd 0 without noise), for draw() to add, by each run
  // that shares these sums (their terms are the inputs alone: C·Bᵀ).
  void settle() {
    if (!on_) return;
    if (mma_ && steps_ % 16 != 0) step();
    if (!mma_) bias_.assign(n_, 0.0);
    sd_.resize(n_);
    for (int64_t i = 0; i < n_; ++i) sd_[i] = mma_ ? kU * std::sqrt(var_[i]) : kU * std::sqrt(var_[i] / 3.0);
  }
  const double* sums() const { return acc_.data(); }
  const double* bias() const { return bias_.data(); }  // after settle(), with noise
  const double* sd() const { return sd_.data(); }      // after settle(), with noise
  // out[i] = acc[i] + (bias[i] + sd[i]·gauss) for i < n, one Gaussian each in order.
  static void draw(const double* acc, const double* bias, const double* sd, int64_t n, Rng& rng, double* out) {
    rng.add_gauss(acc, bias, sd, n, out);
  }

 private:
  // Terms in the next block: at most four and the rest, ending at a tensor-core step's end.
  int64_t block(int64_t rest) const {
    const int64_t b = std::min<int64_t>(4, rest);
    return on_ && mma_ ? std::min<int64_t>(b, 16 - steps_ % 16) : b;
  }
  void stepped(int64_t b) {
    if (!on_ || !mma_) return;
    steps_ += b;
    if (steps_ % 16 == 0) step();
  }
  // One block of B terms, acc[i] += a[k]·v[k·stride + i] for k < B, into n sums (and their
  // running variances when the noise is on and the order is not the tensor core's: [N3]).
  template <int B>
  [[gnu::always_inline]] void accumulate(double* __restrict acc, double* __restrict var, const double* a,
                                         const double* __restrict v, int64_t stride, int64_t n) const {
    if (!on_ || mma_) {
      for (int64_t i = 0; i < n; ++i) {
        double s = acc[i];
        for (int k = 0; k < B; ++k) s += a[k] * v[k * stride + i];
        acc[i] = s;
      }
      return;
    }
    for (int64_t i = 0; i < n; ++i) {
      double s = acc[i], q = var[i];
      for (int k = 0; k < B; ++k) {
        const double t = a[k] * v[k * stride + i];
        s += t;
        q += s * s + t * t;
      }
      acc[i] = s;
      var[i] = q;
    }
  }
  // (Inlined into add_terms, so compiled for each of its clones; likewise add_outer_block.)
  template <int B>
  [[gnu::always_inline]] void add_block(const double* a, const double* v, int64_t stride) {
    accumulate<B>(acc_.data(), var_.data(), a, v, stride, n_);
  }
  template <int B>
  [[gnu::always_inline]] void add_outer_block(const double* x, const double* v, int64_t P, int64_t N) {
    for (int64_t pp = 0; pp < P; ++pp) {
      double xs[B];
      for (int k = 0; k < B; ++k) xs[k] = x[k * P + pp];
      accumulate<B>(&acc_[size_t(pp * N)], var_.data() + (on_ && !mma_ ? pp * N : 0), xs, v, N, N);
    }
  }
  void step() {
    for (int64_t i = 0; i < n_; ++i) {
      const double s = acc_[i], a = std::fabs(s), m = std::max(a, std::fabs(last_[i]));
      bias_[i] -= std::copysign(kU * a, s);
      var_[i] += a * a / 3.0 + 17.0 * 0.25 * m * m / 3.0;  // in units of u²: (2^-25·m)² = u²·m²/4
      last_[i] = s;
    }
  }
  bool mma_, on_ = false;
  int64_t n_ = 0, steps_ = 0;
  std::vector<double> acc_, var_, bias_, last_, sd_;
};

double round_opt(const std::optional<Format>& f, double v) { return f ? round_value(*f, v) : v; }

// δ for token t of head h ([N2] the softplus budget, [N1] the add).
double delta_of(const Problem& p, const Emulation& e, Model& m, int64_t t, int64_t h) {
  const bool bias = p.has_dt_bias() && !e.drop_dt_bias;
  double v = double(p.dt[p.dt_index(t, h)]);
  if (bias) v = m.rounded(v + double(p.dt_bias[h]));
  double d = p.dt_softplus && !e.drop_softplus ? m.softplus(v) : v;
  d = std::min(std::max(d, double(p.dt_limit_lo)), double(p.dt_limit_hi));
  return round_opt(e.at(Site::delta), d);
}

// y's epilogue over row t of head h: + D·x (one rounding), the gate y·z·σ(z) (two roundings
// and the sigmoid's budget), then the store to the output format; row holds the P sums and
// gets the stored values; scratch holds 2P doubles. Each step goes over the row (the same bits
// as element by element; a stochastic store draws in the order of p).
SSMV_VECTOR_CLONES void y_epilogue(const Problem& p, const Emulation& e, Model& m, int64_t t, int64_t h, double* row,
                                   double* scratch) {
  const int64_t P = p.shape.P, x0 = p.x_index(t, h, 0);
  if (p.has_D() && !e.drop_D) {
    double* x = scratch;
    p.x.to_doubles(size_t(x0), size_t(P), x);
    for (int64_t pp = 0; pp < P; ++pp) row[pp] = row[pp] + double(p.d_value(h, pp)) * x[pp];
    m.round_all(row, P);
  }
  if (p.has_z()) {
    double *z = scratch, *gate = scratch + P;
    p.z.to_doubles(size_t(x0), size_t(P), z);
    for (int64_t pp = 0; pp < P; ++pp) row[pp] = row[pp] * z[pp];
    m.round_all(row, P);
    m.sigmoid_all(z, gate, P);
    for (int64_t pp = 0; pp < P; ++pp) row[pp] = row[pp] * gate[pp];
    m.round_all(row, P);
  }
  if (e.output_truncated) {
    for (int64_t pp = 0; pp < P; ++pp) row[pp] = round_toward_zero(e.output, row[pp]);
  } else if (e.stochastic_output && m.on()) {
    for (int64_t pp = 0; pp < P; ++pp) row[pp] = round_stochastically(e.output, row[pp], m.rng());
  } else {
    round_values(e.output, row, P);
  }
}

// The state as stored in the state format (through state_via first, when set), in place;
// round-to-nearest stores go through the vectorised round_values.
SSMV_VECTOR_CLONES void store_all(const Emulation& e, Model& m, std::vector<double>& S) {
  if (const std::optional<Format>& via = e.at(Site::state_via)) round_values(*via, S.data(), int64_t(S.size()));
  if (e.stochastic_state && m.on()) {
    for (double& v : S) v = round_stochastically(e.state, v, m.rng());
    return;
  }
  round_values(e.state, S.data(), int64_t(S.size()));
}

// Where row j of y is written: the caller's scratch row when it takes rows as they come
// (UnitOutputs::y_row), else the sequence's y; y_row_done hands a scratch row over.
void start_y(UnitOutputs& out, int64_t len, int64_t P) {
  if (out.y_row) {
    out.y.clear();
    out.row.resize(size_t(P));
  } else {
    out.y.assign(size_t(len * P), 0.0);
  }
}
// Whether the runs' reader asked them to end early (UnitOutputs::stop).
bool stopped(const std::vector<UnitOutputs*>& outs) {
  for (const UnitOutputs* out : outs) {
    if (out->stop != nullptr && out->stop->load(std::memory_order_relaxed)) return true;
  }
  return false;
}

double* y_row_at(UnitOutputs& out, int64_t j, int64_t P) { return out.y_row ? out.row.data() : &out.y[size_t(j * P)]; }
void y_row_done(UnitOutputs& out, int64_t j) {
  if (out.y_row) out.y_row(j, out.row.data());
}

void initial_state(const Problem& p, int64_t s, int64_t h, std::vector<double>& S) {
  const int64_t PN = p.shape.P * p.shape.N;
  S.assign(PN, 0.0);
  if (!p.has_initial_state()) return;
  const float* src = &p.initial_state[p.state_index(s, h, 0, 0)];
  for (int64_t i = 0; i < PN; ++i) S[i] = double(src[i]);
}

// The same transposed, S[n·P + p] (every element written).
void initial_state_transposed(const Problem& p, int64_t s, int64_t h, std::vector<double>& S) {
  const int64_t P = p.shape.P, N = p.shape.N;
  S.resize(size_t(P * N));
  if (!p.has_initial_state()) {
    std::fill(S.begin(), S.end(), 0.0);
    return;
  }
  const float* src = &p.initial_state[p.state_index(s, h, 0, 0)];
  for (int64_t pp = 0; pp < P; ++pp) {
    for (int64_t n = 0; n < N; ++n) S[size_t(n * P + pp)] = double(src[pp * N + n]);
  }
}

// The sequential family (SSU), token by token: the update S = a·S + (δB)·x is two
// roundings ([N1]) at |a·S| and |S_new| (unfused: the deeper of the two forms a contract allows).
// The state is held transposed, [N, P], so that y's P sums over n run side by side.
// Several runs of one unit go in lockstep, kSlab tokens at a time each in turn (lockstep_rows):
// a caller that compares every run's rows with the first's keeps a slab of the first's rows, not
// the sequence's. Each run keeps its own state, noise streams and Model (whose Rng is the run's
// stream) between slabs, and a slab only continues where the last one stopped, so every run's
// draws come in the order of a run alone: its outputs are the same bits
// (SharpEmulation.SequentialRunsInLockstepEqualRunsAlone).
class SequentialEmulation {
 public:
  // Tokens per run and turn: a slab's rows of P outputs (16 KB of y in bf16 at P = 64, where the
  // state a run carries from slab to slab is N·P doubles and as many 32-bit streams: 96 KB at
  // N = 128), and 1024 turns per run over 65,536 tokens.
  static constexpr int64_t kSlab = 64;

  SequentialEmulation(const Problem& p, const Contract& c, const Emulation& e, int64_t s, int64_t h)
      : p_(p), e_(e), h_(h), P_(p.shape.P), N_(p.shape.N), g_(p.shape.group_of(h)), t0_(p.shape.cu_seqlens[s]),
        len_(p.shape.seq_len(s)), K_(std::max<int64_t>(1, e.tokens_per_launch)), A_(double(p.A[h])),
        ysum_(reduction_of(c, Sum::y).order) {
    // S0: the unit's initial state transposed, once for every run (a strided pass over P·N).
    initial_state_transposed(p, s, h, S0_);
    dB_.resize(N_);
    x_.resize(P_);
    cd_.resize(N_);
    ep_.resize(2 * P_);  // y_epilogue's scratch
    row_b_.resize(N_);
    row_c_.resize(N_);
  }

  // Runs models[r] into *outs[r] for every r, the runs in turn slab by slab.
  void run(std::vector<Model>& models, const std::vector<UnitOutputs*>& outs) {
    for (size_t r = 0; r < models.size(); ++r) start(models[r], *outs[r]);
    for (int64_t j0 = 0; j0 < len_; j0 += kSlab) {
      if (stopped(outs)) return;
      for (size_t r = 0; r < models.size(); ++r) tokens(models[r], *outs[r], j0, std::min(len_, j0 + kSlab));
    }
    for (UnitOutputs* out : outs) finish(*out);
  }

 private:
  // A run's state before its first token: S0, and with noise the update's streams, seeded from
  // the run's stream before any other draw.
  void start(Model& m, UnitOutputs& out) {
    out.work_state = S0_;  // [N, P]
    start_y(out, len_, P_);
    if (m.on()) {
      std::vector<uint32_t>& lanes = out.work_lanes;  // [N, P] the update's noise streams (nonzero seeds)
      lanes.resize(size_t(N_ * P_));
      m.rng().odd_high_words(lanes.data(), int64_t(lanes.size()));
    }
  }

  // Tokens [j0, j1) of the sequence (places in it) for one run, from where its last slab stopped.
  SSMV_VECTOR_CLONES void tokens(Model& m, UnitOutputs& out, int64_t j0, int64_t j1) {
    const Emulation& e = e_;
    const int64_t P = P_, N = N_, h = h_;
    std::vector<double>& S = out.work_state;  // [N, P]
    std::vector<double>& Sy = out.work_stored;
    std::vector<uint32_t>& lanes = out.work_lanes;
    double *dB = dB_.data(), *x = x_.data(), *cd = cd_.data();
    for (int64_t j = j0; j < j1; ++j) {
      const int64_t t = t0_ + j;
      const double d = delta_of(p_, e, m, t, h);
      const double a = m.exp(m.rounded(d * A_));
      const float* B = p_.B.read(size_t(p_.bc_index(t, g_, 0)), size_t(N), row_b_.data());
      const float* C = p_.C.read(size_t(p_.bc_index(t, g_, 0)), size_t(N), row_c_.data());
      for (int64_t n = 0; n < N; ++n) dB[n] = round_opt(e.at(Site::dB), m.rounded(d * double(B[n])));
      p_.x.to_doubles(size_t(p_.x_index(t, h, 0)), size_t(P), x);
      for (int64_t n = 0; n < N; ++n) {
        double* __restrict row = &S[n * P];
        const double b = dB[n];
        if (m.on()) {
          // [N1] for the update's two roundings, drawn from each element's own xorshift32
          // stream (two 16-bit uniforms per step): a loop of independent 32-bit lanes, so it
          // vectorises, where one 64-bit generator per draw made the runs 3x slower than the
          // reference. The streams are seeded from the unit's counter-based stream (start),
          // so they are the same for any thread count.
          uint32_t* __restrict st = &lanes[size_t(n * P)];
          for (int64_t pp = 0; pp < P; ++pp) {
            uint32_t v = st[pp];
            v ^= v << 13;
            v ^= v >> 17;
            v ^= v << 5;
            st[pp] = v;
            const double e1 = (double(int32_t(v & 0xffffu)) + 0.5) * 0x1p-15 - 1.0;
            const double e2 = (double(int32_t(v >> 16)) + 0.5) * 0x1p-15 - 1.0;
            const double as = a * row[pp], next = as + b * x[pp];
            row[pp] = next + kU * (std::fabs(as) * e1 + std::fabs(next) * e2);
          }
        } else {
          for (int64_t pp = 0; pp < P; ++pp) row[pp] = a * row[pp] + b * x[pp];
        }
      }
      if (e.at(Site::running_state)) round_values(*e.at(Site::running_state), S.data(), int64_t(S.size()));
      const double* src = S.data();
      if (e.y_from_stored_state) {
        Sy = S;
        store_all(e, m, Sy);
        src = Sy.data();
      }
      ysum_.reset(P, m.on());
      for (int64_t n = 0; n < N; ++n) cd[n] = double(C[n]);
      ysum_.add_terms(cd, src, P, N);
      const double* yv = ysum_.finish(m.rng());
      double* yrow = y_row_at(out, j, P);
      std::copy_n(yv, P, yrow);
      y_epilogue(p_, e, m, t, h, yrow, ep_.data());
      y_row_done(out, j);
      // The store at each launch's end: the next launch reads the stored state.
      if ((j + 1) % K_ == 0 || j + 1 == len_) store_all(e, m, S);
    }
  }

  // The final state, [P, N], from the run's working state [N, P].
  void finish(UnitOutputs& out) const {
    const std::vector<double>& S = out.work_state;
    out.state.resize(P_ * N_);
    for (int64_t pp = 0; pp < P_; ++pp) {
      for (int64_t n = 0; n < N_; ++n) out.state[pp * N_ + n] = S[n * P_ + pp];
    }
  }

  const Problem& p_;
  const Emulation& e_;
  int64_t h_, P_, N_, g_, t0_, len_, K_;
  double A_;
  // y's sums of a token, reset for every token and run (a run's draws go to its own Rng).
  ParallelSums ysum_;
  // S0_ [N, P]; a token's δ·B [N], x [P], C [N] and y_epilogue's scratch [2P], filled per token.
  std::vector<double> S0_, dB_, x_, cd_, ep_;
  std::vector<float> row_b_, row_c_;  // a token's B and C held as bits, decoded [N]
};

// The chunked family (chunk_scan) piece by piece, in the stages of the chunked SSD
// algorithm; every value is formed as the kernel forms it (docs/bounds.md §3) so that the
// declared roundings see the values the kernel rounds. Several runs of one unit (Monte Carlo
// runs, each with its own Model) go side by side, piece by piece: C·Bᵀ depends on the inputs
// alone, so its sums (and their noise's variance and bias, [N3]) are formed once per piece and
// each run draws its own noise on them — they had been 40 % of a run. The other sums' noise
// ([N3]: the chunk state, each row's inter- and intra-chunk terms) is modelled once too, on the
// partial sums of a noise-free run that goes first (the declared emulation where the caller runs
// it with its Monte Carlo runs, else one more run whose outputs are dropped); each noisy run
// forms its sums alone and draws its noise from those figures: the variance's squares had been
// two thirds of a noisy run's sums. Each run's draws come in the order of a run alone and the
// figures come from the same noise-free run, so its outputs are the same whichever runs it goes
// with.
class ChunkedEmulation {
 public:
  ChunkedEmulation(const Problem& p, const Contract& c, const Emulation& e, int64_t s, int64_t h, bool noisy,
                   SharedSums* shared)
      : p_(p), e_(e), shared_(shared), s_(s), h_(h), P_(p.shape.P), N_(p.shape.N), g_(p.shape.group_of(h)),
        L_(c.chunk_size),
        begin_(p.shape.cu_seqlens[s]), end_(p.shape.cu_seqlens[s + 1]), A_(double(p.A[h])), noisy_(noisy),
        state_sum_(reduction_of(c, Sum::chunk_state).order), cb_sum_(reduction_of(c, Sum::cb).order),
        y_sum_(reduction_of(c, Sum::y).order) {
    if (L_ < 1) throw std::invalid_argument("emulate_unit: a chunked contract needs chunk_size >= 1");
    pieces_ = chunk_pieces(begin_, end_, L_, c.chunk_layout);
    xk_.resize(L_ * P_);
    row_b_.resize(N_);
    row_c_.resize(N_);
    Bt_.resize(N_ * L_);
    Bd_.resize(L_ * N_);
    Cd_.resize(L_ * N_);
    bt_.resize(L_ * N_);
    w_.resize(L_);
    dk_.resize(L_);
    ep_.resize(2 * P_);
    state_bias_.resize(P_ * N_);
    state_sd_.resize(P_ * N_);
    for (std::vector<double>* v : {&inter_bias_, &inter_sd_, &intra_bias_, &intra_sd_, &inter_sums_, &xT_}) {
      v->resize(L_ * P_);
    }
  }

  // Runs models[r] into *outs[r] for every r. With noise, models[0] is the noise-free run that
  // models the others' noise.
  void run(std::vector<Model>& models, const std::vector<UnitOutputs*>& outs) {
    std::vector<Run> runs(models.size());
    for (size_t r = 0; r < runs.size(); ++r) {
      Run& u = runs[r];
      u.m = &models[r];
      u.out = outs[r];
      initial_state(p_, s_, h_, u.hs);
      u.hinT.resize(N_ * P_);
      u.dl.resize(L_);
      u.cs.resize(L_);
      start_y(*u.out, end_ - begin_, P_);
    }
    for (size_t pi = 0; pi < pieces_.size(); ++pi) {
      if (stopped(outs)) return;
      const ChunkPiece& pc = pieces_[pi];
      load_piece(pc, int64_t(pi));
      for (Run& u : runs) run_piece(u, pc, pi + 1 == pieces_.size());
    }
    for (Run& u : runs) {
      store_all(e_, *u.m, u.hs);
      u.out->state = std::move(u.hs);
    }
  }

 private:
  // One run's values: its noise, running state and the piece's δ and cumulative sums.
  struct Run {
    Model* m = nullptr;
    UnitOutputs* out = nullptr;
    std::vector<double> hs;    // [P, N] the running state, fp32 in the kernel
    std::vector<double> hinT;  // [N, P] the incoming state as y reads it, transposed
    std::vector<double> dl, cs;  // [len] δ and the cumulative sum of δ·A
  };

  // What the runs share of a piece: x, B, C as doubles and the C·Bᵀ sums of every row.
  SSMV_VECTOR_CLONES void load_piece(const ChunkPiece& pc, int64_t piece) {
    const int64_t t0 = pc.start, len = pc.len, P = P_, N = N_;
    for (int64_t k = 0; k < len; ++k) {
      p_.x.to_doubles(size_t(p_.x_index(t0 + k, h_, 0)), size_t(P), &xk_[k * P]);
      for (int64_t pp = 0; pp < P; ++pp) xT_[pp * len + k] = xk_[k * P + pp];
      const float* B = p_.B.read(size_t(p_.bc_index(t0 + k, g_, 0)), size_t(N), row_b_.data());
      const float* C = p_.C.read(size_t(p_.bc_index(t0 + k, g_, 0)), size_t(N), row_c_.data());
      for (int64_t n = 0; n < N; ++n) {
        Bt_[n * len + k] = Bd_[k * N + n] = double(B[n]);
        Cd_[k * N + n] = double(C[n]);
      }
    }
    // (d) C_m·B_k for k ≤ m, row m at offset m(m + 1)/2: sums over n, formed here or by
    // another head of the group (the same inputs, the same bits).
    const auto form = [&](SharedSums::Piece& out) {
      const size_t rows = size_t(len * (len + 1) / 2);
      out.acc.resize(rows);
      out.bias.resize(noisy_ ? rows : 0);
      out.sd.resize(noisy_ ? rows : 0);
      for (int64_t mi = 0; mi < len; ++mi) {
        const size_t off = size_t(mi * (mi + 1) / 2);
        cb_sum_.reset(mi + 1, noisy_);
        cb_sum_.add_terms(&Cd_[mi * N], Bt_.data(), len, N);
        cb_sum_.settle();
        std::copy_n(cb_sum_.sums(), mi + 1, &out.acc[off]);
        if (noisy_) {
          std::copy_n(cb_sum_.bias(), mi + 1, &out.bias[off]);
          std::copy_n(cb_sum_.sd(), mi + 1, &out.sd[off]);
        }
      }
    };
    cb_held_.reset();  // the piece before, let go first: no unit keeps more than the one in hand
    if (shared_ != nullptr) {
      cb_held_ = shared_->get(s_, g_, piece, noisy_, form);
      cb_ = cb_held_.get();
    } else {
      form(cb_own_);
      cb_ = &cb_own_;
    }
  }
  SSMV_VECTOR_CLONES void run_piece(Run& u, const ChunkPiece& pc, bool last_piece) {
    Model& m = *u.m;
    const Emulation& e = e_;
    const int64_t t0 = pc.start, len = pc.len, P = P_, N = N_;
    std::vector<double> &dl = u.dl, &cs = u.cs, &hs = u.hs, &hinT = u.hinT;
    // (a) δ and the cumulative sum from the chunk's first token ([N1] for each δ·A). [N4] The
    // running sum's roundings are drawn with one sign for the whole chunk: adding nearly the same
    // term again and again (a clamped δ) rounds the same way at every step, so those errors add
    // up linearly — measured on the bundled twin, 0.22e-6 per step, always upward, at |cs| ≈ 6
    // over 256 tokens of δ = 2^-9 — and independent draws understated its final state 8-fold.
    // One sign per chunk is the deepest growth any order allows (the bound's γ_len·Σ|cs|).
    double run = 0, cs_b = 0;
    const double cs_sign = m.on() ? (m.rng().next() >> 63 ? 1.0 : -1.0) : 0.0;
    for (int64_t t = pc.chunk_start; t < t0 + len; ++t) {
      const double d = delta_of(p_, e, m, t, h_);
      const double dA = m.rounded(d * A_);
      run += dA;
      if (m.on()) run += cs_sign * m.rng().uniform() * kU * std::fabs(run);
      run = round_opt(e.at(Site::cumsum), run);
      if (t == t0 - 1) cs_b = run;
      if (t >= t0) {
        dl[t - t0] = d;
        cs[t - t0] = run;
      }
    }
    const double cs_last = cs[len - 1];
    // (b) the chunk state Σ_k x_k[p]·R(B_k[n]·exp(cs_last − cs_k)·δ_k): P·N sums over k.
    for (int64_t k = 0; k < len; ++k) {
      const double scale = m.rounded(m.exp(m.rounded(cs_last - cs[k])) * dl[k]);
      double* row = &bt_[k * N];
      for (int64_t n = 0; n < N; ++n) row[n] = Bd_[k * N + n] * scale;
      m.round_all(row, N);
      if (e.at(Site::dt_scaled_B)) round_values(*e.at(Site::dt_scaled_B), row, N);
    }
    // The noise-free run that models the noisy runs' noise keeps its sums as they are.
    const bool models_noise = noisy_ && !m.on();
    const auto finished = [&](ParallelSums& sum, double* bias, double* sd) {
      if (models_noise) return sum.model_into(bias, sd);
      return m.on() ? sum.finish_with(m.rng(), bias, sd) : sum.finish(m.rng());
    };
    // A run that does not model the noise forms its sums as matrix products (the same bits as
    // add_terms: each sum's terms in order from zero), rows of the tiles side by side.
    if (models_noise) {
      state_sum_.reset(P * N, true);
      state_sum_.add_outer_terms(xk_.data(), bt_.data(), P, N, len);
    } else {
      rows_product(Product<double, double, double>{P, len, N, xT_.data(), len, bt_.data(), N,
                                                    state_sum_.reset_formed(P * N), N});
    }
    const double* st = finished(state_sum_, state_bias_.data(), state_sd_.data());
    // (c) the incoming state as y reads it, then the state passing
    // h = exp(cs_last − cs_b)·h + chunk state ([N1]: two roundings; [N2] the exp).
    for (int64_t pp = 0; pp < P; ++pp) {
      for (int64_t n = 0; n < N; ++n) hinT[n * P + pp] = round_opt(e.at(Site::incoming_state), hs[pp * N + n]);
    }
    const double chunk_decay = m.exp(m.rounded(cs_last - cs_b));
    const std::optional<Format>& fin = e.at(Site::final_incoming_state);
    if (last_piece && fin) round_values(*fin, hs.data(), P * N);  // the incoming state as the last piece reads it
    for (int64_t i = 0; i < P * N; ++i) hs[i] = chunk_decay * hs[i];
    m.round_all(hs.data(), P * N);
    for (int64_t i = 0; i < P * N; ++i) hs[i] = hs[i] + st[i];
    m.round_all(hs.data(), P * N);
    if (e.at(Site::running_state)) round_values(*e.at(Site::running_state), hs.data(), int64_t(hs.size()));
    // (d), (e) y row by row: exp(cs_m − cs_b)·(C_m·h_in), then Σ_{k≤m} R(C_m·B_k·exp(cs_m − cs_k)·δ_k)·x_k.
    // The inter-chunk sums C_m·h_in of every row, before the rows, where they are products.
    if (!models_noise) {
      rows_product(Product<double, double, double>{len, N, P, Cd_.data(), N, hinT.data(), P, inter_sums_.data(), P});
    }
    // A run whose y sums are formed without their noise model, and whose stores draw nothing,
    // goes through the rows in blocks: their intra-chunk sums as one product.
    if (!models_noise && !(e.stochastic_output && m.on())) {
      y_rows_in_blocks(u, pc, cs_b);
      return;
    }
    for (int64_t mi = 0; mi < len; ++mi) {
      const int64_t t = t0 + mi;
      double* w = w_.data();
      row_weights(m, m.rng(), mi, cs, dl, w);
      if (models_noise) {
        y_sum_.reset(P, true);
        y_sum_.add_terms(&Cd_[mi * N], hinT.data(), P, N);
      } else {
        std::copy_n(&inter_sums_[mi * P], P, y_sum_.reset_formed(P));
      }
      double* inter = finished(y_sum_, &inter_bias_[mi * P], &inter_sd_[mi * P]);
      scale_inter_term(m, mi, cs_b, cs, inter);
      y_sum_.restart();
      y_sum_.add_terms(w, xk_.data(), P, mi + 1);
      const double* yv = finished(y_sum_, &intra_bias_[mi * P], &intra_sd_[mi * P]);
      double* yrow = y_row_at(*u.out, t - begin_, P);
      std::copy_n(yv, P, yrow);
      y_epilogue(p_, e, m, t, h_, yrow, ep_.data());
      y_row_done(*u.out, t - begin_);
    }
  }

  // Row mi's intra-chunk weights w_k = R(rounded(rounded(cb_k·exp(rounded(cs_m − cs_k)))·δ_k))
  // for k ≤ mi into w, each step over the row; a noisy run draws its noise on the shared C·Bᵀ
  // sums from rng (mi + 1 draws), as finish() would draw it.
  SSMV_VECTOR_CLONES void row_weights(Model& m, Rng& rng, int64_t mi, const std::vector<double>& cs,
                                      const std::vector<double>& dl, double* w) {
    const size_t off = size_t(mi * (mi + 1) / 2);
    const int64_t nk = mi + 1;
    const double* cb = cb_->acc.data() + off;
    if (m.on()) {
      cb_row_.resize(size_t(nk));
      ParallelSums::draw(cb, cb_->bias.data() + off, cb_->sd.data() + off, nk, rng, cb_row_.data());
      cb = cb_row_.data();
    }
    double* dk = dk_.data();
    for (int64_t k = 0; k < nk; ++k) dk[k] = cs[mi] - cs[k];
    m.round_all(dk, nk);
    m.exp_all(dk, w, nk);
    for (int64_t k = 0; k < nk; ++k) w[k] = cb[k] * w[k];
    m.round_all(w, nk);
    for (int64_t k = 0; k < nk; ++k) w[k] = w[k] * dl[k];
    m.round_all(w, nk);
    if (e_.at(Site::decayed_CB)) round_values(*e_.at(Site::decayed_CB), w, nk);
  }

  // Row mi's inter-chunk term, its sums (with their noise) given in `inter`: rounded(inter·decay_m)
  // element by element, as a loop over the row (the same bits), decay_m = exp(rounded(cs_m − cs_b)).
  SSMV_VECTOR_CLONES void scale_inter_term(Model& m, int64_t mi, double cs_b, const std::vector<double>& cs,
                                           double* inter) {
    const double decay_m = m.exp(m.rounded(cs[mi] - cs_b));
    for (int64_t pp = 0; pp < P_; ++pp) inter[pp] = inter[pp] * decay_m;
    m.round_all(inter, P_);
    if (e_.at(Site::inter_term)) round_values(*e_.at(Site::inter_term), inter, P_);
  }

  // y of the piece for a run that forms its sums without their noise model and stores without
  // draws, kBlockRows rows at a time: each row's weights and inter-chunk term (its noise drawn from
  // the run's stream at the row's own place: a row draws mi + 1 numbers for C·Bᵀ, then P for the
  // inter- and P for the intra-chunk sums, and nothing else), then the block's intra-chunk terms
  // onto the inter-chunk ones — k ≤ first row as one product (spec/rows_product.h, onto), then
  // each later row's last terms — then the rows' noise, epilogue and hand-over in order. Every
  // sum's terms go in k order onto the same start and every draw is the one the row-by-row loop
  // makes, so the bits are those of the loop above; the product reads each x row once per block
  // instead of once per row (the loop over rows one by one was a tenth of a chunk_scan check's CPU).
  SSMV_VECTOR_CLONES void y_rows_in_blocks(Run& u, const ChunkPiece& pc, double cs_b) {
    Model& m = *u.m;
    const int64_t t0 = pc.start, len = pc.len, P = P_, L = L_;
    block_w_.resize(size_t(kBlockRows * L));
    block_y_.resize(size_t(kBlockRows * P));
    for (int64_t m0 = 0; m0 < len; m0 += kBlockRows) {
      const int64_t nb = std::min(kBlockRows, len - m0);
      uint64_t drawn = 0;  // draws of the block's rows before row j
      for (int64_t j = 0; j < nb; ++j) {
        const int64_t mi = m0 + j;
        Rng& rng = block_rng_[size_t(j)];
        rng = m.rng();
        rng.skip(drawn);
        row_weights(m, rng, mi, u.cs, u.dl, &block_w_[j * L]);
        double* inter = &block_y_[j * P];
        std::copy_n(&inter_sums_[mi * P], P, inter);
        if (m.on()) ParallelSums::draw(inter, &inter_bias_[mi * P], &inter_sd_[mi * P], P, rng, inter);
        scale_inter_term(m, mi, cs_b, u.cs, inter);
        if (m.on()) drawn += uint64_t(mi + 1 + 2 * P);
      }
      rows_product(Product<double, double, double>{nb, m0 + 1, P, block_w_.data(), L, xk_.data(), P, block_y_.data(),
                                                    P, /*onto=*/true});
      for (int64_t j = 1; j < nb; ++j) {  // row m0 + j's terms m0 < k <= m0 + j, onto the rest
        rows_product(Product<double, double, double>{1, j, P, &block_w_[j * L + m0 + 1], L, &xk_[(m0 + 1) * P], P,
                                                      &block_y_[j * P], P, /*onto=*/true});
      }
      for (int64_t j = 0; j < nb; ++j) {
        const int64_t mi = m0 + j, t = t0 + mi;
        double* y = &block_y_[j * P];
        if (m.on()) ParallelSums::draw(y, &intra_bias_[mi * P], &intra_sd_[mi * P], P, block_rng_[size_t(j)], y);
        double* yrow = y_row_at(*u.out, t - begin_, P);
        std::copy_n(y, P, yrow);
        y_epilogue(p_, e_, m, t, h_, yrow, ep_.data());
        y_row_done(*u.out, t - begin_);
      }
      m.rng().skip(drawn);
    }
  }

  const Problem& p_;
  const Emulation& e_;
  SharedSums* shared_;  // the pass's C·Bᵀ sums, or null
  int64_t s_, h_, P_, N_, g_, L_, begin_, end_;
  double A_;
  bool noisy_;  // some run draws noise (models[0], noise-free, models it)
  std::vector<ChunkPiece> pieces_;
  // Per piece, shared: x [len, P]; B transposed [N, len] and as it is [len, N]; C [len, N]; the C·Bᵀ rows' sums, and
  // with noise their bias and sd [len(len + 1)/2]. Per run in turn: the dt-scaled B [len, N], a
  // row's weights and its decays' arguments [len], a row's C·Bᵀ with the run's noise [len],
  // y_epilogue's scratch [2P].
  std::vector<double> xk_, Bt_, Bd_, Cd_, bt_, w_, dk_, cb_row_, ep_;
  // y_rows_in_blocks': a block's rows of weights [kBlockRows, L] and y sums [kBlockRows, P], and each row's
  // place in the run's stream.
  std::vector<double> block_w_, block_y_;
  static constexpr int64_t kBlockRows = 4;
  std::vector<Rng> block_rng_ = std::vector<Rng>(kBlockRows, Rng(0));
  // The piece's C·Bᵀ sums: the pass's shared ones (held while the piece is in hand), or this
  // unit's own.
  std::shared_ptr<const SharedSums::Piece> cb_held_;
  SharedSums::Piece cb_own_;
  const SharedSums::Piece* cb_ = nullptr;
  std::vector<float> row_b_, row_c_;  // a token's B and C held as bits, decoded [N]
  // Per piece, from the noise-free run: the bias and sd of the chunk state's sums [P, N] and of
  // each row's inter- and intra-chunk sums [len, P].
  std::vector<double> state_bias_, state_sd_, inter_bias_, inter_sd_, intra_bias_, intra_sd_;
  // Per piece: x transposed [P, len] (shared); a run's inter-chunk sums of every row [len, P].
  std::vector<double> xT_, inter_sums_;
  ParallelSums state_sum_, cb_sum_, y_sum_;
};

}  // namespace

std::shared_ptr<SharedSums::Entry> SharedSums::new_entry() {
  auto entry = std::make_unique<Entry>();
  {
    std::lock_guard<std::mutex> lock(spares_->mutex);
    if (!spares_->pieces.empty()) {
      entry->piece = std::move(spares_->pieces.back());
      spares_->pieces.pop_back();
    }
  }
  const std::weak_ptr<Spares> spares = spares_;
  return std::shared_ptr<Entry>(entry.release(), [spares](Entry* e) {
    // Nothing may leave a deleter (it runs inside the emulation's target_clones functions,
    // spec/vector_clones.h): a piece the spares cannot take is freed with its entry.
    if (const std::shared_ptr<Spares> s = spares.lock()) {
      try {
        std::lock_guard<std::mutex> lock(s->mutex);
        s->pieces.push_back(std::move(e->piece));
      } catch (...) {
      }
    }
    delete e;
  });
}

std::shared_ptr<const SharedSums::Piece> SharedSums::get(int64_t s, int64_t g, int64_t piece, bool noisy,
                                                        const std::function<void(Piece&)>& make) {
  std::shared_ptr<Entry> entry;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    std::weak_ptr<Entry>& slot = entries_[{s, g, piece, noisy}];
    entry = slot.lock();
    if (!entry) {
      entry = new_entry();
      slot = entry;
    }
  }
  // Formed once, outside the lock: the units that reach it meanwhile wait here (a throw leaves
  // it unformed for the next).
  std::call_once(entry->formed, [&] { make(entry->piece); });
  return std::shared_ptr<const Piece>(entry, &entry->piece);
}

int64_t lockstep_rows(const Contract& c) {
  // Chunked: a piece's rows, at most a chunk's (chunk_pieces); sequential: a slab's.
  return c.family == Family::sequential ? SequentialEmulation::kSlab : std::max<int64_t>(1, c.chunk_size);
}

void emulate_unit(const Problem& p, const Contract& c, const Emulation& e, const Noise& noise, int64_t sequence,
                  int64_t head, UnitOutputs& out, SharedSums* shared) {
  emulate_runs(p, c, e, {noise}, sequence, head, {&out}, shared);
}

void emulate_runs(const Problem& p, const Contract& c, const Emulation& e, const std::vector<Noise>& noises,
                  int64_t sequence, int64_t head, const std::vector<UnitOutputs*>& outs, SharedSums* shared) {
  if (noises.size() != outs.size() || noises.empty()) {
    throw std::invalid_argument("emulate_runs: " + std::to_string(noises.size()) + " noises for " +
                                std::to_string(outs.size()) + " outputs");
  }
  // All with noise, all without, or the first without (the declared emulation) and the rest with.
  const bool rest_on = noises.back().on;
  for (size_t r = 0; r < noises.size(); ++r) {
    if (noises[r].on != rest_on && (r > 0 || noises[r].on)) {
      throw std::invalid_argument("emulate_runs: noise on in some runs and off in others (only the first may be "
                                  "noise-free: the declared emulation beside its Monte Carlo runs)");
    }
  }
  std::vector<Model> models;
  std::vector<UnitOutputs*> all;
  UnitOutputs dropped;  // the noise model's run where none of the caller's is noise-free
  if (c.family != Family::sequential && noises[0].on) {
    models.emplace_back(c, Noise{}, sequence, head);
    dropped.y_row = [](int64_t, const double*) {};
    all.push_back(&dropped);
  }
  for (size_t r = 0; r < noises.size(); ++r) {
    models.emplace_back(c, noises[r], sequence, head);
    all.push_back(outs[r]);
  }
  if (c.family == Family::sequential) {
    SequentialEmulation(p, c, e, sequence, head).run(models, all);
    return;
  }
  ChunkedEmulation(p, c, e, sequence, head, noises.back().on, shared).run(models, all);
}

}  // namespace ssmv::sharp
