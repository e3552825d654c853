// Running error analysis of the sequential family; every step below is derived in
// docs/bounds.md §2 (the equation numbers in brackets refer to it).
#include "verify/bound/sequential_bound.h"

#include <algorithm>
#include <memory>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <stdexcept>
#include <string>

#include "verify/bound/error_model.h"
#include "spec/parallel.h"
#include "spec/vector_clones.h"
#include "verify/bound/terms.h"

namespace ssmv::bound {
namespace {

// Per (token, head): the kernel's errors in δ and in a = exp(δ·A) [2.1–2.3].
template <class V>
struct StepErrors {
  V d_delta{};  // |δ̂ − δ|
  V d_decay{};  // |â − a|
};

template <class V>
StepErrors<V> step_errors(const Problem& pr, const TranscendentalBudget* b_softplus, bool shortcut,
                          const TranscendentalBudget& b_exp,
                          int64_t t, int64_t h, double delta, double decay, double u, double eta, double eta_op,
                          const Tagger<V>& tag) {
  StepErrors<V> e;
  e.d_delta = delta_error(pr, b_softplus, shortcut, t, h, u, eta, tag, eta_op);
  // [2.3] â = exp(ŵ), ŵ = fl(δ̂·A).
  const double A = pr.A[h];
  e.d_decay = exp_error(b_exp, delta * A, decay, scaled_dt_error(A, delta, e.d_delta, u, eta, tag, eta_op), tag);
  return e;
}

// What every pair of one bound shares: its input and the contract's constants.
struct Setup {
  const SequentialInput* in = nullptr;
  double u = 0, eta = 0;  // the accumulation format's unit roundoff and underflow floor
  double eta_op = 0;      // flushed_operand_floor: 2^-126 when subnormal operands may read as 0
  Format state_fmt{}, out_fmt{};
  bool state_declared = false;  // the contract rounds the stored state to another, coarser format
  double g_red = 0, g2 = 0;
  const TranscendentalBudget* sig = nullptr;   // with z
  const TranscendentalBudget* b_sp = nullptr;  // with softplus and tokens
  const TranscendentalBudget* b_exp = nullptr;  // with tokens
};

// Checks `in` (all but the y vectors, which come per token) and derives the constants.
Setup setup_of(const SequentialInput& in) {
  if (in.problem == nullptr || in.contract == nullptr || !in.delta.present() || !in.decay.present()) {
    throw std::invalid_argument("sequential_bounds: problem, contract, delta and decay are required");
  }
  const size_t pairs = size_t(in.problem->shape.num_tokens() * in.problem->shape.H);
  if (in.delta.size() != pairs || in.decay.size() != pairs) {
    throw std::invalid_argument("sequential_bounds: delta and decay have " + std::to_string(in.delta.size()) + " and " +
                                std::to_string(in.decay.size()) + " values, not T·H = " + std::to_string(pairs));
  }
  const Problem& pr = *in.problem;
  const Contract& c = *in.contract;
  if (c.family != Family::sequential) {
    throw std::invalid_argument("contract '" + c.name + "' is not of the sequential family");
  }
  const Shape& s = pr.shape;
  const int64_t state_size = s.num_sequences() * s.H * s.P * s.N;
  if (!in.initial_state.empty() && int64_t(in.initial_state.size()) != state_size) {
    throw std::invalid_argument("sequential_bounds: initial_state has the wrong size");
  }
  if (!in.initial_error.empty() && int64_t(in.initial_error.size()) != state_size) {
    throw std::invalid_argument("sequential_bounds: initial_error has the wrong size");
  }
  Setup k;
  k.in = &in;
  k.u = format_info(c.accumulation).unit_roundoff;
  k.eta = underflow_floor(c.accumulation, c.flush_to_zero);
  k.eta_op = flushed_operand_floor(c);
  if (in.tokens_per_launch < 0) {
    throw std::invalid_argument("sequential_bounds: tokens_per_launch must be >= 0, got " +
                                std::to_string(in.tokens_per_launch));
  }
  k.state_fmt = pr.formats.state;
  k.out_fmt = pr.formats.output;
  k.state_declared = declared_rounding_error(c, Point::stored_state, pr.formats, k.state_fmt, 1.0) > 0;
  // [2.5] The reduction Σ_n C_n·Ŝ_n + D·x: each term passes through at most
  // product_sum_roundings roundings in the contract's order, one more for adding D·x. An
  // undeclared y sum is one sequential chain (reduction_of).
  const Reduction red = reduction_of(c, Sum::y);
  k.g_red = gamma(product_sum_roundings(red, s.N) + 1, k.u);
  k.g2 = gamma(2, k.u);
  k.sig = pr.has_z() ? &budget(c, "sigmoid") : nullptr;
  const int64_t T = s.num_tokens();
  k.b_sp = T > 0 && pr.dt_softplus ? &budget(c, "softplus") : nullptr;
  k.b_exp = T > 0 ? &budget(c, "exp") : nullptr;
  return k;
}

// The reference's y of one (token, head), [P] each (only the dim evaluated is read).
struct TokenY {
  const double* exact;
  const double* certified_error;
  const double* ungated;
};

// The y of (t, h) in `in`'s vectors.
TokenY token_y(const SequentialInput& in, int64_t t, int64_t h) {
  if (in.y_exact == nullptr || in.y_certified_error == nullptr || in.y_ungated == nullptr) {
    throw std::invalid_argument("sequential_bounds: y_exact, y_certified_error and y_ungated are required");
  }
  const size_t i = size_t(in.problem->x_index(t, h, 0));
  return {in.y_exact->data() + i, in.y_certified_error->data() + i, in.y_ungated->data() + i};
}

// What the [2.4] update of one row reads besides the row: the token's decay a, its bound
// a_hi = a + Δa, δ and δ̂ = |δ| + Δδ, the row's x, Δδ, the double recurrence's margin, the
// contract's γ2, η and flushed-operand floor, the errors of the decay and δ, and the units of
// the arithmetic and underflow sources.
template <class V>
struct RowUpdate {
  int64_t N;
  double a, a_hi, delta, delta_hi, x, dd, margin, g2, eta, eta_op;
  V d_decay, d_delta, unit_arithmetic, unit_underflow;
};

// [2.4] One row's update: the error bound err, the double recurrence st and its absolute
// value sabs, and cur_ub[n] ≥ |S_t| after it, element by element (bt: the token's B). Arithmetic
// only (nothing throws), so that it can be compiled for AVX2 (no FMA: nothing is contracted)
// beside generic x86-64: an exception does not leave a target_clones function.
template <class V>
SSMV_VECTOR_CLONES void update_row(const RowUpdate<V>& r, const double* __restrict bt, double* __restrict st,
                                   double* __restrict sabs, V* __restrict err, double* __restrict cur_ub) {
  // Locals, not the struct's fields, so that the loop below vectorises.
  const double a = r.a, a_hi = r.a_hi, delta = r.delta, delta_hi = r.delta_hi, x = r.x, dd = r.dd;
  const double g2_ = r.g2, eta_ = r.eta, margin = r.margin, eta_op = r.eta_op;
  const double x_underflow = std::max(std::fabs(x), delta_hi);
  const V d_decay = r.d_decay, d_delta = r.d_delta, unit_arithmetic = r.unit_arithmetic,
          unit_underflow = r.unit_underflow;
  for (int64_t n = 0; n < r.N; ++n) {
    const double Bn = bt[n];
    const double prev_ub = std::fabs(st[n]) + margin * sabs[n];  // ≥ |S_{t-1}|
    const double bx = delta * Bn * x;
    // [2.4] the update S = a·S + (δ·B)·x:
    //   (a + Δa)·E + Δa·|S| : the previous error carried, the decay's error;
    //   |B·x|·Δδ + γ2·|δBx| : δ's error and the two roundings of δ·B·x;
    //   γ2·(|âŜ| + |δ̂Bx|)  : the update's at most two roundings (FMA or not);
    //   max(|x|, δ̂, |B|)·η + 3η : underflow of the first product — up to η absolute
    //                         when it is subnormal — then multiplied by the third
    //                         factor (any association); and of the two roundings
    //                         of the update and the second product.
    //   flushed operands (eta_op = 2^-126 under flush_to_zero, else 0): Ŝ or the addend
    //                         read as 0 (a_hi·eta_op, eta_op), â (|S|·eta_op), δ̂, B or
    //                         x (eta_op times the product of the other two).
    const double aS_mag = a_hi * (prev_ub + total(err[n]));
    const double bx_mag = std::fabs(bx) + std::fabs(Bn * x) * dd;
    const double first_product_underflow = std::max(x_underflow, std::fabs(Bn)) * eta_;
    const double flushed = eta_op * (a_hi + 1 + prev_ub + std::fabs(Bn * x) +
                                     delta_hi * (std::fabs(x) + std::fabs(Bn)));
    err[n] = a_hi * err[n] + prev_ub * d_decay + std::fabs(Bn * x) * d_delta +
             (g2_ * bx_mag + g2_ * (aS_mag + bx_mag)) * unit_arithmetic +
             (first_product_underflow + 3 * eta_ + flushed) * unit_underflow;
    st[n] = a * st[n] + bx;
    sabs[n] = a * sabs[n] + std::fabs(bx);
    cur_ub[n] = std::fabs(st[n]) + margin * sabs[n];
  }
}

// The y sums of rows p0 .. p0 + R − 1 of [2.5] (ub and err point at row p0; abs_c: the
// token's |C|): Σ|C_n|·E_n, Σ|C_n|·(ub_n + E_n) and Σ(ub_n + E_n), each in the order of n, the R
// rows side by side (one row's adds had waited on each other; the rows' chains overlap).
// Arithmetic only, compiled for AVX2 (no FMA) beside generic x86-64, as update_row.
// For four rows of doubles, each 4 × 4 block of ub and E is transposed in registers first (as
// reference/row_sums.cpp's), so that each n's four rows are one vector: the same operations
// on the same values in the same order.
template <int R, class V>
SSMV_VECTOR_CLONES void row_sums(int64_t N, const double* __restrict abs_c, const double* __restrict ub,
                                 const V* __restrict err, V* sum_CE, double* sum_CS, double* abs_S) {
  V ce[R] = {};  // the sums in locals: through the pointers each add was a store
  double cs[R] = {}, as[R] = {};
  int64_t n0 = 0;
  if constexpr (R == 4 && std::is_same_v<V, double>) {
    using V4 = double __attribute__((vector_size(32)));
    using I4 = int64_t __attribute__((vector_size(32)));
    const auto transposed = [](const double* p, int64_t N, int64_t n, V4* c) {
      V4 r0, r1, r2, r3;
      std::memcpy(&r0, p + n, sizeof r0);
      std::memcpy(&r1, p + N + n, sizeof r1);
      std::memcpy(&r2, p + 2 * N + n, sizeof r2);
      std::memcpy(&r3, p + 3 * N + n, sizeof r3);
      const V4 t0 = __builtin_shuffle(r0, r1, I4{0, 4, 2, 6}), t1 = __builtin_shuffle(r0, r1, I4{1, 5, 3, 7});
      const V4 t2 = __builtin_shuffle(r2, r3, I4{0, 4, 2, 6}), t3 = __builtin_shuffle(r2, r3, I4{1, 5, 3, 7});
      c[0] = __builtin_shuffle(t0, t2, I4{0, 1, 4, 5});
      c[1] = __builtin_shuffle(t1, t3, I4{0, 1, 4, 5});
      c[2] = __builtin_shuffle(t0, t2, I4{2, 3, 6, 7});
      c[3] = __builtin_shuffle(t1, t3, I4{2, 3, 6, 7});
    };
    V4 vce{}, vcs{}, vas{};
    for (; n0 + 4 <= N; n0 += 4) {
      V4 u[4], e[4];
      transposed(ub, N, n0, u);
      transposed(err, N, n0, e);
      for (int j = 0; j < 4; ++j) {
        const V4 s_mag = u[j] + e[j];
        vce += abs_c[n0 + j] * e[j];
        vcs += abs_c[n0 + j] * s_mag;
        vas += s_mag;
      }
    }
    for (int k = 0; k < 4; ++k) {
      ce[k] = vce[k];
      cs[k] = vcs[k];
      as[k] = vas[k];
    }
  }
  for (int64_t n = n0; n < N; ++n) {
    for (int k = 0; k < R; ++k) {
      const int64_t i = k * N + n;
      const double s_mag = ub[i] + total(err[i]);
      ce[k] += abs_c[n] * err[i];
      cs[k] += abs_c[n] * s_mag;
      as[k] += s_mag;
    }
  }
  for (int k = 0; k < R; ++k) {
    sum_CE[k] = ce[k];
    sum_CS[k] = cs[k];
    abs_S[k] = as[k];
  }
}

// One (sequence, head) pair's bound in value type V (tagged.h), token by token, with its
// own working set: every dim, or one (`dim`, for an element's parts). Every output is the
// bound times kSafetyFactor.
template <class V>
class PairStepper {
 public:
  PairStepper(const Setup& k, const Tagger<V>& tag) : k_(k), pr_(*k.in->problem), tag_(tag) {
    const Shape& s = pr_.shape;
    St_.resize(size_t(s.P * s.N));
    Sabs_.resize(size_t(s.P * s.N));
    E_.resize(size_t(s.P * s.N));
    Bt_.resize(size_t(s.N));
    abs_Ct_.resize(size_t(s.N));
    ub_.resize(size_t(s.P * s.N));
  }

  void start(int64_t seq, int64_t h, int64_t dim) {
    const SequentialInput& in = *k_.in;
    const Shape& s = pr_.shape;
    const int64_t PN = s.P * s.N;
    seq_ = seq;
    h_ = h;
    dim_ = dim;
    next_t_ = s.cu_seqlens[seq];
    for (int64_t i = 0; i < PN; ++i) {
      const int64_t si = pr_.state_index(seq, h, 0, 0) + i;
      St_[i] = !in.initial_state.empty() ? in.initial_state[si]
               : pr_.has_initial_state() ? double(pr_.initial_state[si]) : 0.0;
      Sabs_[i] = std::fabs(St_[i]);
      E_[i] = in.initial_error.empty() ? V{} : tag_.at(BoundSource::initial_error, in.initial_error[si]);
    }
  }

  // Token t's step; with `y`, the bounds of y[t, h, :] to y_bound[p] (null: y not wanted).
  void step(int64_t t, const TokenY* y, V* y_bound) {
    const Shape& s = pr_.shape;
    if (t != next_t_ || t >= s.cu_seqlens[seq_ + 1]) {
      throw std::logic_error("SequentialPairBound: token " + std::to_string(t) + " given, token " +
                             std::to_string(next_t_) + " of sequence " + std::to_string(seq_) + " expected");
    }
    ++next_t_;
    const SequentialInput& in = *k_.in;
    const Contract& c = *in.contract;
    const int64_t P = s.P, N = s.N, h = h_;
    const int64_t g = s.group_of(h);
    const double u = k_.u, eta = k_.eta;
    const double delta = in.delta[size_t(pr_.dt_index(t, h))];
    const double a = in.decay[size_t(pr_.dt_index(t, h))];
    const StepErrors<V> se =
        step_errors(pr_, k_.b_sp, c.softplus_shortcut, *k_.b_exp, t, h, delta, a, u, eta, k_.eta_op, tag_);
    const double dd = total(se.d_delta), da = total(se.d_decay);
    // |S| ≤ |St| + margin·Sabs: the double recurrence St and its absolute Sabs after
    // this token's step, at most t − cu + 1 steps from the start [2.4].
    const double dbl_margin = double_recurrence_margin(t - s.cu_seqlens[seq_] + 1);
    // [2.4] the underflow of the first of the two products δ·B·x, which the contract
    // lets a kernel associate in any order: (δ·B)·x carries it times |x|, δ·(B·x)
    // times δ̂ ≤ δ + Δδ, (δ·x)·B times |B_n|.
    const double delta_hi = std::fabs(delta) + dd;
    // [2.6] this token ends a launch: the K-th of it, or the sequence's last (a shorter launch).
    const int64_t K = in.tokens_per_launch, pos = t - s.cu_seqlens[seq_];
    const bool launch_end = K > 0 && ((pos + 1) % K == 0 || t + 1 == s.cu_seqlens[seq_ + 1]);
    const float* B = pr_.B.read(size_t(pr_.bc_index(t, g, 0)), size_t(N), row_b_);
    const float* C = pr_.C.read(size_t(pr_.bc_index(t, g, 0)), size_t(N), row_c_);
    for (int64_t n = 0; n < N; ++n) {
      Bt_[n] = B[n];
      abs_Ct_[n] = std::fabs(double(C[n]));
    }
    const double a_hi = a + da;
    // tag.at(source, v) = v·unit(source): the sources' units hoisted out of the loop.
    const V unit_arithmetic = tag_.at(BoundSource::arithmetic, 1.0),
            unit_underflow = tag_.at(BoundSource::underflow, 1.0);
    for (int64_t p = 0; p < P; ++p) {
      if (dim_ >= 0 && p != dim_) continue;
      const RowUpdate<V> ru{N, a, a_hi, delta, delta_hi, pr_.x[pr_.x_index(t, h, p)], dd, dbl_margin, k_.g2, eta,
                            k_.eta_op, se.d_decay, se.d_delta, unit_arithmetic, unit_underflow};
      double *st = &St_[p * N], *sabs = &Sabs_[p * N], *cur_ub = &ub_[p * N];
      V* err = &E_[p * N];
      update_row(ru, Bt_.data(), st, sabs, err, cur_ub);
      const double margin = dbl_margin;
      if (launch_end && (k_.state_fmt != c.accumulation || k_.state_declared)) {
        // [2.6] store at the launch's end, felt by the next launch's steps; a block-scaled state
        // rounds the row (h, p) with one scale from its largest |Ŝ_n| (error_model.h)
        double row_mag = 0;
        for (int64_t n = 0; n < N; ++n) row_mag = std::max(row_mag, cur_ub[n] + total(err[n]));
        for (int64_t n = 0; n < N; ++n) {
          const double mag = cur_ub[n] + total(err[n]);
          // |Ŝ| ≥ |S̃| − margin·Sabs − E: a lower bound, for a rounding that may flush tiny values
          const double lo = std::fabs(st[n]) - margin * sabs[n] - total(err[n]);
          err[n] += tag_.at(BoundSource::stored_state,
                            store_rounding_error(c, Point::stored_state, pr_.formats, k_.state_fmt, mag, lo, row_mag));
        }
      }
    }
    if (y == nullptr) return;  // y does not feed the state
    // Σ|C_n|, the same for every row.
    double sum_C = 0;
    for (int64_t n = 0; n < N; ++n) sum_C += abs_Ct_[n];
    // Each row's sums over n in the order of n, four rows side by side (each sum's adds had
    // waited on the one before; the rows' chains overlap), then its y bound.
    int64_t p = dim_ >= 0 ? dim_ : 0;
    const int64_t end = dim_ >= 0 ? dim_ + 1 : P;
    for (; p + 4 <= end; p += 4) y_rows<4>(t, p, sum_C, *y, y_bound);
    for (; p < end; ++p) y_rows<1>(t, p, sum_C, *y, y_bound);
  }

  // The bounds of y[t, h, p] for rows p0 .. p0 + R − 1 after token t's update [2.5–2.8].
  template <int R>
  void y_rows(int64_t t, int64_t p0, double sum_C, const TokenY& y, V* y_bound) const {
    const SequentialInput& in = *k_.in;
    const Contract& c = *in.contract;
    const int64_t N = pr_.shape.N, h = h_;
    const double u = k_.u, eta = k_.eta;
    double sum_CS[R], abs_S[R];
    V sum_CE[R];
    row_sums<R>(N, abs_Ct_.data(), &ub_[size_t(p0 * N)], &E_[size_t(p0 * N)], sum_CE, sum_CS, abs_S);
    for (int k = 0; k < R; ++k) {
      const int64_t p = p0 + k;
      const double x = pr_.x[pr_.x_index(t, h, p)];
      // [2.5] y before the gate. At a launch's end the output is still computed from the
      // unrounded state of this token in SSU, but an external kernel may read back the
      // stored one; E already includes the store rounding in that case.
      const double Dx = double(pr_.d_value(h, p)) * x;
      // Flushed operands: C_n or Ŝ_n read as 0 (eta_op·(|Ŝ_n| + |C_n|)), each of the N + 2
      // accumulator operands, D or x (eta_op·(|x| + |D|)).
      const double y_flushed =
          k_.eta_op * (abs_S[k] + sum_C + double(N + 2) + std::fabs(x) + std::fabs(double(pr_.d_value(h, p))));
      V y_pre_err = sum_CE[k] + tag_.at(BoundSource::sum_y, k_.g_red * (sum_CS[k] + std::fabs(Dx))) +
                    tag_.at(BoundSource::arithmetic, u * std::fabs(Dx)) +
                    tag_.at(BoundSource::underflow, (N + 2) * eta + y_flushed);
      // |y| from the reference: before the gate (its nearest double: it enters only
      // first-order terms) and an upper bound of the output [2.8].
      if (k_.sig != nullptr) {
        // [2.7] gate y·z·σ(z)
        y_pre_err = gate_error(y_pre_err, std::fabs(y.ungated[p]), double(pr_.z[pr_.x_index(t, h, p)]), *k_.sig,
                               k_.g2, eta, tag_, k_.eta_op);
      }
      const double y_abs = exact_abs_upper(y.exact[p], y.certified_error[p]);
      // [2.8] rounding to the output format: half an ULP at |ŷ| ≤ |y| + error. With an
      // fp32 output this is the final fp32 rounding of the gate or of the sum.
      const V beta =
          y_pre_err + tag_.at(BoundSource::output, store_rounding_error(c, Point::output, pr_.formats, k_.out_fmt,
                                                                        y_abs + total(y_pre_err)));
      y_bound[p] = kSafetyFactor * beta;
    }
  }

  // After the last token: the bounds of the state before and after the final store, [P, N].
  void finish(V* state, V* stored_state) const {
    const Shape& s = pr_.shape;
    if (next_t_ != s.cu_seqlens[seq_ + 1]) {
      throw std::logic_error("SequentialPairBound: finished at token " + std::to_string(next_t_) + " of sequence " +
                             std::to_string(seq_) + ", which ends at " + std::to_string(s.cu_seqlens[seq_ + 1]));
    }
    const SequentialInput& in = *k_.in;
    const Contract& c = *in.contract;
    const int64_t N = s.N;
    const double margin = double_recurrence_margin(s.seq_len(seq_));
    // The final store rounds the state unless it is kept in the accumulation format as it is,
    // or the last launch's step stored it already.
    const bool store_rounds = !((k_.state_fmt == c.accumulation && !k_.state_declared) || in.tokens_per_launch > 0);
    if (!store_rounds) {
      for (int64_t i = 0; i < s.P * N; ++i) {
        if (dim_ >= 0 && i / N != dim_) continue;
        state[i] = kSafetyFactor * E_[i];
        stored_state[i] = kSafetyFactor * E_[i];
      }
      return;
    }
    // The largest |S| of each row (h, p): a block-scaled state's store rounds it with one scale.
    std::vector<double> row_mag(size_t(s.P), 0.0);
    for (int64_t i = 0; i < s.P * N; ++i) {
      row_mag[size_t(i / N)] = std::max(row_mag[size_t(i / N)], std::fabs(St_[i]) + margin * Sabs_[i] + total(E_[i]));
    }
    for (int64_t i = 0; i < s.P * N; ++i) {
      if (dim_ >= 0 && i / N != dim_) continue;
      const double state_ub = std::fabs(St_[i]) + margin * Sabs_[i];
      const double state_lo = std::fabs(St_[i]) - margin * Sabs_[i] - total(E_[i]);
      state[i] = kSafetyFactor * E_[i];
      stored_state[i] =
          kSafetyFactor * (E_[i] + tag_.at(BoundSource::stored_state,
                                           store_rounding_error(c, Point::stored_state, pr_.formats, k_.state_fmt,
                                                                state_ub + total(E_[i]), state_lo,
                                                                row_mag[size_t(i / N)])));
    }
  }

 private:
  const Setup& k_;
  const Problem& pr_;
  Tagger<V> tag_;
  int64_t seq_ = 0, h_ = 0, dim_ = -1, next_t_ = 0;
  std::vector<double> St_, Sabs_;  // [P, N] the double recurrence and its absolute value
  std::vector<V> E_;               // [P, N] the error bound
  std::vector<double> Bt_, abs_Ct_;  // [N]: this token's B and |C|
  std::vector<float> row_b_, row_c_;  // [N]: this token's B and C held as bits, decoded
  std::vector<double> ub_;           // [P, N]: the rows' |S_t| bounds
};

}  // namespace

SequentialBounds sequential_bounds(const SequentialInput& in) {
  if (in.problem == nullptr || in.contract == nullptr || !in.delta.present() || !in.decay.present() ||
      in.y_exact == nullptr || in.y_certified_error == nullptr || in.y_ungated == nullptr) {
    throw std::invalid_argument(
        "sequential_bounds: problem, contract, delta, decay, y_exact, y_certified_error and y_ungated are required");
  }
  const Setup k = setup_of(in);
  const Problem& pr = *in.problem;
  const Shape& s = pr.shape;
  const int64_t S = s.num_sequences(), H = s.H;
  SequentialBounds out;
  out.y.assign(size_t(s.num_tokens() * H * s.P), 0.0);
  out.state.assign(size_t(S * H * s.P * s.N), 0.0);
  out.stored_state.assign(out.state.size(), 0.0);
  // The (sequence, head) pairs, task seq·H + h, each bounded by one worker's stepper.
  const int threads = std::max(1, in.threads);
  const Tagger<double> tag(in.weights);
  std::vector<std::unique_ptr<PairStepper<double>>> steppers(static_cast<size_t>(threads));
  for_each_task(S * H, threads, [&](int64_t task, int64_t worker) {
    std::unique_ptr<PairStepper<double>>& ps = steppers[size_t(worker)];
    if (!ps) ps = std::make_unique<PairStepper<double>>(k, tag);
    const int64_t seq = task / H, h = task % H;
    ps->start(seq, h, -1);
    for (int64_t t = s.cu_seqlens[seq]; t < s.cu_seqlens[seq + 1]; ++t) {
      const TokenY y = token_y(in, t, h);
      ps->step(t, &y, &out.y[size_t(pr.x_index(t, h, 0))]);
    }
    const size_t si = size_t(pr.state_index(seq, h, 0, 0));
    ps->finish(&out.state[si], &out.stored_state[si]);
  });
  return out;
}

Tagged sequential_bound_parts(const SequentialInput& in, BoundOf which, int64_t index, const YElement* y_element) {
  const Setup k = setup_of(in);
  const Problem& pr = *in.problem;
  const Shape& s = pr.shape;
  int64_t seq = 0, h = 0, dim = 0, t_focus = -1, size = 0;
  if (which == BoundOf::y) {
    size = s.num_tokens() * s.H * s.P;
    t_focus = index / (s.H * s.P);
    seq = int64_t(std::upper_bound(s.cu_seqlens.begin(), s.cu_seqlens.end(), t_focus) - s.cu_seqlens.begin()) - 1;
    h = (index / s.P) % s.H;
    dim = index % s.P;
  } else if (which == BoundOf::state || which == BoundOf::stored_state) {
    size = s.num_sequences() * s.H * s.P * s.N;
    seq = index / (s.H * s.P * s.N);
    h = (index / (s.P * s.N)) % s.H;
    dim = (index / s.N) % s.P;
  } else {
    throw std::invalid_argument("sequential_bound_parts: the sequential family bounds y, state and stored_state only");
  }
  if (index < 0 || index >= size) {
    throw std::invalid_argument("sequential_bound_parts: index " + std::to_string(index) + " is outside the tensor");
  }
  // Only the element's sequence, head and dim; y only at its token (y does not feed the state).
  PairStepper<Tagged> ps(k, Tagger<Tagged>(in.weights));
  ps.start(seq, h, dim);
  std::vector<Tagged> y_bound(size_t(s.P));
  for (int64_t t = s.cu_seqlens[seq]; t < s.cu_seqlens[seq + 1]; ++t) {
    if (t != t_focus) {
      ps.step(t, nullptr, nullptr);
    } else if (y_element == nullptr) {
      const TokenY y = token_y(in, t, h);
      ps.step(t, &y, y_bound.data());
    } else {
      // The element's own y at its dim (the only one read).
      std::vector<double> exact(size_t(s.P)), error(size_t(s.P)), ungated(size_t(s.P));
      exact[size_t(dim)] = y_element->exact;
      error[size_t(dim)] = y_element->certified_error;
      ungated[size_t(dim)] = y_element->ungated;
      const TokenY y{exact.data(), error.data(), ungated.data()};
      ps.step(t, &y, y_bound.data());
    }
  }
  if (which == BoundOf::y) return y_bound[size_t(dim)];
  std::vector<Tagged> state(size_t(s.P * s.N)), stored(size_t(s.P * s.N));
  ps.finish(state.data(), stored.data());
  const size_t i = size_t(index - pr.state_index(seq, h, 0, 0));
  return which == BoundOf::state ? state[i] : stored[i];
}

struct SequentialPairBound::Impl {
  Setup setup;
  PairStepper<double> stepper;
  explicit Impl(const SequentialInput& in) : setup(setup_of(in)), stepper(setup, Tagger<double>(in.weights)) {}
};

SequentialPairBound::SequentialPairBound(const SequentialInput& in) : impl_(std::make_unique<Impl>(in)) {}
SequentialPairBound::~SequentialPairBound() = default;

void SequentialPairBound::start(int64_t seq, int64_t h) {
  const Shape& s = impl_->setup.in->problem->shape;
  if (seq < 0 || seq >= s.num_sequences() || h < 0 || h >= s.H) {
    throw std::out_of_range("SequentialPairBound: pair (" + std::to_string(seq) + ", " + std::to_string(h) +
                            ") is outside the problem");
  }
  impl_->stepper.start(seq, h, -1);
}

void SequentialPairBound::step(int64_t t, std::span<const double> y_exact, std::span<const double> y_certified_error,
                               std::span<const double> y_ungated, std::span<double> y_bound) {
  const size_t P = size_t(impl_->setup.in->problem->shape.P);
  if (y_exact.size() != P || y_certified_error.size() != P || y_ungated.size() != P || y_bound.size() != P) {
    throw std::invalid_argument("SequentialPairBound::step: the y spans must hold P = " + std::to_string(P) +
                                " values each");
  }
  const TokenY y{y_exact.data(), y_certified_error.data(), y_ungated.data()};
  impl_->stepper.step(t, &y, y_bound.data());
}

void SequentialPairBound::finish(std::span<double> state, std::span<double> stored_state) {
  const Shape& s = impl_->setup.in->problem->shape;
  const size_t PN = size_t(s.P * s.N);
  if (state.size() != PN || stored_state.size() != PN) {
    throw std::invalid_argument("SequentialPairBound::finish: the spans must hold P·N = " + std::to_string(PN) +
                                " values each");
  }
  impl_->stepper.finish(state.data(), stored_state.data());
}

}  // namespace ssmv::bound
