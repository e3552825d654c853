// Terms both families share, written once for both value types of tagged.h: the error of δ
// [2.1–2.2] and of the gate [2.7]. Internal to verify/bound/.
#pragma once

#include <algorithm>
#include <cmath>

#include "spec/contract.h"
#include "spec/problem.h"
#include "verify/bound/error_model.h"
#include "verify/bound/tagged.h"

namespace ssmv::bound {

inline double softplus(double v) { return v > 30 ? v + std::log1p(std::exp(-v)) : std::log1p(std::exp(v)); }
inline double sigmoid(double v) { return 1.0 / (1.0 + std::exp(-v)); }

// |δ̂ − δ| at (t, h): [2.1] v̂ = fl(dt + dt_bias), one rounding when there is a bias (none
// otherwise: dt is exact); [2.2] |softplus(v̂) − softplus(v)| ≤ σ(max(v, v̂))·|v̂ − v| plus
// the implementation's budget, plus, where the contract declares the shortcut
// softplus(v̂) = v̂ for v̂ > 20 (Contract::softplus_shortcut), its own error
// softplus(v̂) − v̂ = log1p(e^−v̂) ≤ e^−v̂ ≤ e^−max(20, v − Δv) — at most 2.1e-9, far below
// an fp32 ULP of δ > 20, so a budget measured with the shortcut is not loosened by it.
// clamp is 1-Lipschitz: it never increases |δ̂ − δ|.
//
// `eta_op` (flushed_operand_floor: 2^-126 when the contract flushes subnormals, else 0): a
// subnormal operand of dt + dt_bias may be read as zero, 2^-126 each. The transcendental
// budgets need no such term: they were measured on every fp32 argument, subnormal ones
// (flushed by the measured code itself) included.
template <class V>
V delta_error(const Problem& pr, const TranscendentalBudget* b_softplus, bool softplus_shortcut, int64_t t, int64_t h,
              double u, double eta, const Tagger<V>& tag, double eta_op = 0) {
  const double v = pr.dt[pr.dt_index(t, h)] + (pr.has_dt_bias() ? pr.dt_bias[h] : 0.0);
  const V dv = pr.has_dt_bias() ? tag.at(BoundSource::arithmetic, u * std::fabs(v)) +
                                      tag.at(BoundSource::underflow, eta + 2 * eta_op)
                                : V{};
  if (b_softplus == nullptr) return dv;
  const double dvt = total(dv);
  const double shortcut = softplus_shortcut && v + dvt > 20 ? std::exp(-std::max(20.0, v - dvt)) : 0.0;
  return sigmoid(v + dvt) * dv +
         tag.at(BoundSource::softplus, transcendental_error(*b_softplus, v, softplus(v + dvt), dvt) + shortcut);
}

// [2.7] the gate y·z·σ(z) on an incoming error `err` of y (magnitude ≤ y_abs): |zσ| times
// the error, plus two roundings and σ's budget relative to σ(z); fl(z·σ(z)) may underflow
// (η absolute) and then multiplies y: η·(|y| + β) + η. With flushed operands (`eta_op`,
// 2^-126 or 0) z read as zero in z·σ costs σ·eta_op·|y| ≤ eta_op·(|y| + β), y read as zero
// eta_op·|zσ|.
template <class V>
V gate_error(const V& err, double y_abs, double z, const TranscendentalBudget& b_sigmoid, double g2, double eta,
             const Tagger<V>& tag, double eta_op = 0) {
  const double sz = sigmoid(z);
  const double gz = std::fabs(z) * sz;
  const double sig_rel = transcendental_error(b_sigmoid, z, sz) / sz;
  const double mag = y_abs + total(err);
  return gz * err + tag.at(BoundSource::arithmetic, g2 * gz * mag) + tag.at(BoundSource::sigmoid, sig_rel * gz * mag) +
         tag.at(BoundSource::underflow, eta * mag + eta + eta_op * (mag + gz));
}

// [2.3] ŵ = fl(δ̂·A), the argument of the decay (and of the chunked cumulative sum's
// terms): |ŵ − δA| ≤ |A|·Δδ + u·|δ̂A| (+ η when the product falls below the normal range;
// + eta_op·(|A| + |δ̂|) when a subnormal δ̂ or A may be read as zero, eta_op as in delta_error).
template <class V>
V scaled_dt_error(double A, double delta, const V& d_delta, double u, double eta, const Tagger<V>& tag,
                  double eta_op = 0) {
  return std::fabs(A) * d_delta +
         tag.at(BoundSource::arithmetic, u * std::fabs(A) * (std::fabs(delta) + total(d_delta))) +
         tag.at(BoundSource::underflow, eta + eta_op * (std::fabs(A) + std::fabs(delta) + total(d_delta)));
}

// Error of exp at exact argument w, whose exact value is e (std::exp(w), or the reference's
// nearest double), computed from an argument off by at most Δw: e·expm1(Δw) from the
// argument, plus the budget at the evaluated argument (its ULPs grow with |ŵ| ≤ |w| + Δw)
// for a result of magnitude at most e·exp(Δw) [2.3, 3.4].
template <class V>
V exp_error(const TranscendentalBudget& b, double w, double e, const V& dw, const Tagger<V>& tag) {
  const double dwt = total(dw), em1 = std::expm1(dwt);
  return tag.like(dw, e * em1, BoundSource::arithmetic) +
         tag.at(BoundSource::exp, transcendental_error(b, w, e * (1 + em1), dwt));
}

// The sink of a bound run: the double run writes every element into vectors; the Tagged
// run keeps one element's parts.
template <class V>
struct Focus {
  int64_t sequence = -1, head = -1, dim = -1;  // -1: all
  BoundOf which = BoundOf::y;
  int64_t index = -1;  // the element (in `which`'s layout) whose parts are kept
  bool y_wanted = true;
  V kept{};
  bool found = false;
  bool covers(int64_t seq, int64_t h) const { return (sequence < 0 || seq == sequence) && (head < 0 || h == head); }
  bool covers_dim(int64_t p) const { return dim < 0 || p == dim; }
  void keep(BoundOf w, int64_t i, const V& v) {
    if (w == which && i == index) {
      kept = v;
      found = true;
    }
  }
};

}  // namespace ssmv::bound
