// Running error analysis of the sequential family; every step below is derived in
// docs/bounds.md §2 (the equation numbers in brackets refer to it).
#include "verify/bound/sequential_bound.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "verify/bound/error_model.h"
#include "spec/parallel.h"
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
StepErrors<V> step_errors(const Problem& pr, const TranscendentalBudget* b_softplus, const TranscendentalBudget& b_exp,
                          int64_t t, int64_t h, double delta, double decay, double u, double eta, const Tagger<V>& tag) {
  StepErrors<V> e;
  e.d_delta = delta_error(pr, b_softplus, t, h, u, eta, tag);
  // [2.3] â = exp(ŵ), ŵ = fl(δ̂·A).
  const double A = pr.A[h];
  e.d_decay = exp_error(b_exp, delta * A, decay, scaled_dt_error(A, delta, e.d_delta, u, eta, tag), tag);
  return e;
}

// The bound in value type V (tagged.h): writes every element into `out` (V = double), or
// keeps the focused element's parts (`focus`, only its sequence, head and dim evaluated).
template <class V>
void run(const SequentialInput& in, const Tagger<V>& tag, Focus<V>* focus, SequentialBounds* out) {
  if (in.problem == nullptr || in.contract == nullptr || in.delta == nullptr || in.decay == nullptr ||
      in.y_exact == nullptr || in.y_certified_error == nullptr || in.y_ungated == nullptr) {
    throw std::invalid_argument(
        "sequential_bounds: problem, contract, delta, decay, y_exact, y_certified_error and y_ungated are required");
  }
  const Problem& pr = *in.problem;
  const Contract& c = *in.contract;
  if (c.family != Family::sequential) {
    throw std::invalid_argument("contract '" + c.name + "' is not of the sequential family");
  }
  const Shape& s = pr.shape;
  const int64_t S = s.num_sequences(), T = s.num_tokens(), H = s.H, P = s.P, N = s.N;
  const int64_t state_size = S * H * P * N;
  if (!in.initial_state.empty() && int64_t(in.initial_state.size()) != state_size) {
    throw std::invalid_argument("sequential_bounds: initial_state has the wrong size");
  }
  if (!in.initial_error.empty() && int64_t(in.initial_error.size()) != state_size) {
    throw std::invalid_argument("sequential_bounds: initial_error has the wrong size");
  }

  const double u = format_info(c.accumulation).unit_roundoff;
  const double eta = underflow_floor(c.accumulation, c.flush_to_zero);
  const Format state_fmt = pr.formats.state, out_fmt = pr.formats.output;
  // [2.5] The reduction Σ_n C_n·Ŝ_n + D·x: each term passes through at most
  // product_sum_roundings roundings in the contract's order, one more for adding D·x. An
  // undeclared y sum is one sequential chain (reduction_of).
  const Reduction red = reduction_of(c, Sum::y);
  const double g_red = gamma(product_sum_roundings(red, N) + 1, u);
  const double g2 = gamma(2, u);
  const TranscendentalBudget* sig = pr.has_z() ? &budget(c, "sigmoid") : nullptr;

  if (out != nullptr) {
    out->y.assign(T * H * P, 0.0);
    out->state.assign(state_size, 0.0);
    out->stored_state.assign(state_size, 0.0);
  }
  const auto emit = [&](BoundOf which, std::vector<double> SequentialBounds::*field, int64_t i, const V& v) {
    if (out != nullptr) (out->*field)[i] = total(v) * kSafetyFactor;
    if (focus != nullptr) focus->keep(which, i, kSafetyFactor * v);
  };

  const TranscendentalBudget* b_sp = T > 0 && pr.dt_softplus ? &budget(c, "softplus") : nullptr;
  const TranscendentalBudget* b_exp = T > 0 ? &budget(c, "exp") : nullptr;
  // The (sequence, head) pairs, each bounded by one worker with its own working set.
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (int64_t seq = 0; seq < S; ++seq) {
    for (int64_t h = 0; h < H; ++h) {
      if (focus == nullptr || focus->covers(seq, h)) pairs.emplace_back(seq, h);
    }
  }
  struct Work {
    std::vector<double> St, Sabs;  // [P, N]
    std::vector<V> E;
    std::vector<double> Bt, abs_Ct, ub;  // [N]: this token's B and |C|, the row's |S_t| bounds
  };
  const int threads = focus != nullptr ? 1 : std::max(1, in.threads);
  std::vector<Work> works(static_cast<size_t>(threads));
  for_each_task(int64_t(pairs.size()), threads, [&](int64_t task, int64_t worker) {
    const auto [seq, h] = pairs[task];
    std::vector<double>& St = works[worker].St;
    std::vector<double>& Sabs = works[worker].Sabs;
    std::vector<V>& E = works[worker].E;
    St.resize(P * N);
    Sabs.resize(P * N);
    E.resize(P * N);
    std::vector<double>& Bt = works[worker].Bt;
    std::vector<double>& abs_Ct = works[worker].abs_Ct;
    std::vector<double>& ub = works[worker].ub;
    Bt.resize(N);
    abs_Ct.resize(N);
    ub.resize(N);
    const int64_t g = s.group_of(h);
    for (int64_t i = 0; i < P * N; ++i) {
      const int64_t si = pr.state_index(seq, h, 0, 0) + i;
      St[i] = !in.initial_state.empty() ? in.initial_state[si]
              : pr.has_initial_state() ? double(pr.initial_state[si]) : 0.0;
      Sabs[i] = std::fabs(St[i]);
      E[i] = in.initial_error.empty() ? V{} : tag.at(BoundSource::initial_error, in.initial_error[si]);
    }
    for (int64_t t = s.cu_seqlens[seq]; t < s.cu_seqlens[seq + 1]; ++t) {
      const double delta = (*in.delta)[pr.dt_index(t, h)];
      const double a = (*in.decay)[pr.dt_index(t, h)];
      const StepErrors<V> se = step_errors(pr, b_sp, *b_exp, t, h, delta, a, u, eta, tag);
      const double dd = total(se.d_delta), da = total(se.d_decay);
      // |S| ≤ |St| + margin·Sabs: the double recurrence St and its absolute Sabs after
      // this token's step, at most t − cu + 1 steps from the start [2.4].
      const double dbl_margin = double_recurrence_margin(t - s.cu_seqlens[seq] + 1);
      // [2.4] the underflow of the first of the two products δ·B·x, which the contract
      // lets a kernel associate in any order: (δ·B)·x carries it times |x|, δ·(B·x)
      // times δ̂ ≤ δ + Δδ, (δ·x)·B times |B_n|.
      const double delta_hi = std::fabs(delta) + dd;
      for (int64_t n = 0; n < N; ++n) {
        Bt[n] = pr.B[pr.bc_index(t, g, n)];
        abs_Ct[n] = std::fabs(double(pr.C[pr.bc_index(t, g, n)]));
      }
      const double a_hi = a + da;
      // tag.at(source, v) = v·unit(source): the sources' units hoisted out of the loop.
      const V unit_arithmetic = tag.at(BoundSource::arithmetic, 1.0), unit_underflow = tag.at(BoundSource::underflow, 1.0);
      for (int64_t p = 0; p < P; ++p) {
        if (focus != nullptr && !focus->covers_dim(p)) continue;
        const double x = pr.x[pr.x_index(t, h, p)];
        const double x_underflow = std::max(std::fabs(x), delta_hi);
        // Locals, not the closure's references, so that the loop below vectorises.
        const double g2_ = g2, eta_ = eta, margin = dbl_margin;
        const V d_decay = se.d_decay, d_delta = se.d_delta;
        double* __restrict st = &St[p * N];
        double* __restrict sabs = &Sabs[p * N];
        V* __restrict err = &E[p * N];
        const double* __restrict bt = Bt.data();
        double* __restrict cur_ub = ub.data();
        for (int64_t n = 0; n < N; ++n) {
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
          const double aS_mag = a_hi * (prev_ub + total(err[n]));
          const double bx_mag = std::fabs(bx) + std::fabs(Bn * x) * dd;
          const double first_product_underflow = std::max(x_underflow, std::fabs(Bn)) * eta_;
          err[n] = a_hi * err[n] + prev_ub * d_decay + std::fabs(Bn * x) * d_delta +
                   (g2_ * bx_mag + g2_ * (aS_mag + bx_mag)) * unit_arithmetic +
                   (first_product_underflow + 3 * eta_) * unit_underflow;
          st[n] = a * st[n] + bx;
          sabs[n] = a * sabs[n] + std::fabs(bx);
          cur_ub[n] = std::fabs(st[n]) + margin * sabs[n];
        }
        if (in.store_every_token && state_fmt != c.accumulation) {
          // [2.6] store, felt by the next step
          for (int64_t n = 0; n < N; ++n) {
            err[n] += tag.at(BoundSource::stored_state, half_ulp_at_most(state_fmt, cur_ub[n] + total(err[n])));
          }
        }
        double sum_CS = 0;
        V sum_CE{};
        for (int64_t n = 0; n < N; ++n) {
          sum_CE += abs_Ct[n] * err[n];
          sum_CS += abs_Ct[n] * (cur_ub[n] + total(err[n]));
        }
        // [2.5] y before the gate. With store_every_token the output is still computed from
        // the unrounded state of this token in SSU, but an external kernel may read back
        // the stored one; E already includes the store rounding in that case.
        const double Dx = double(pr.d_value(h, p)) * x;
        V y_pre_err = sum_CE + tag.at(BoundSource::sum_y, g_red * (sum_CS + std::fabs(Dx))) +
                      tag.at(BoundSource::arithmetic, u * std::fabs(Dx)) +
                      tag.at(BoundSource::underflow, (N + 2) * eta);
        // |y| from the reference: before the gate (its nearest double: it enters only
        // first-order terms) and an upper bound of the output [2.8].
        const int64_t yi = pr.x_index(t, h, p);
        if (sig != nullptr) {
          // [2.7] gate y·z·σ(z)
          y_pre_err = gate_error(y_pre_err, std::fabs((*in.y_ungated)[yi]), double(pr.z[yi]), *sig, g2, eta, tag);
        }
        const double y_abs = exact_abs_upper((*in.y_exact)[yi], (*in.y_certified_error)[yi]);
        // [2.8] rounding to the output format: half an ULP at |ŷ| ≤ |y| + error. With an
        // fp32 output this is the final fp32 rounding of the gate or of the sum.
        const V beta =
            y_pre_err + tag.at(BoundSource::output, half_ulp_at_most(out_fmt, y_abs + total(y_pre_err)));
        emit(BoundOf::y, &SequentialBounds::y, yi, beta);
      }
    }
    for (int64_t i = 0; i < P * N; ++i) {
      if (focus != nullptr && !focus->covers_dim(i / N)) continue;
      const int64_t si = pr.state_index(seq, h, 0, 0) + i;
      const double state_ub = std::fabs(St[i]) + double_recurrence_margin(s.seq_len(seq)) * Sabs[i];
      emit(BoundOf::state, &SequentialBounds::state, si, E[i]);
      emit(BoundOf::stored_state, &SequentialBounds::stored_state, si,
           (state_fmt == c.accumulation || in.store_every_token)
               ? E[i]
               : E[i] + tag.at(BoundSource::stored_state, half_ulp_at_most(state_fmt, state_ub + total(E[i]))));
    }
  });
}

}  // namespace

SequentialBounds sequential_bounds(const SequentialInput& in) {
  SequentialBounds out;
  run<double>(in, Tagger<double>(in.weights), nullptr, &out);
  return out;
}

Tagged sequential_bound_parts(const SequentialInput& in, BoundOf which, int64_t index) {
  const Shape& s = in.problem->shape;
  Focus<Tagged> f;
  f.which = which;
  f.index = index;
  if (which == BoundOf::y) {
    const int64_t t = index / (s.H * s.P);
    f.sequence = int64_t(std::upper_bound(s.cu_seqlens.begin(), s.cu_seqlens.end(), t) - s.cu_seqlens.begin()) - 1;
    f.head = (index / s.P) % s.H;
    f.dim = index % s.P;
  } else if (which == BoundOf::state || which == BoundOf::stored_state) {
    f.sequence = index / (s.H * s.P * s.N);
    f.head = (index / (s.P * s.N)) % s.H;
    f.dim = (index / s.N) % s.P;
  } else {
    throw std::invalid_argument("sequential_bound_parts: the sequential family bounds y, state and stored_state only");
  }
  run<Tagged>(in, Tagger<Tagged>(in.weights), &f, nullptr);
  if (!f.found) throw std::invalid_argument("sequential_bound_parts: index " + std::to_string(index) + " is outside the tensor");
  return f.kept;
}

}  // namespace ssmv::bound
