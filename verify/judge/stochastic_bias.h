// Is a stochastic rounding unbiased? The per-element bound of a stochastic rounding point
// allows a whole ULP for any draw (docs/bounds.md [2.6]), so a rounding that always goes up
// with probability 0.6 stays within it: only the statistics over many elements can see it.
//
// Element i: exact value e_i, stored s_i (the kernel's value v_i before the store, unknown,
// within b_i of e_i), weight w_i = ulp_f(|e_i|). Unbiased stochastic rounding gives
// E[s_i | v_i] = v_i, so d_i = (s_i − e_i)/w_i has mean (v_i − e_i)/w_i, at most b_i/w_i in
// magnitude, and takes one of two values r_i = ulp_f(|e_i| + b_i)/w_i apart (the neighbours of
// v_i). With several stochastic stores per element (one per launch), b_i is the error bound
// without the stores (the bound with its stored-state source weighted 0) and the earlier stores'
// errors — each of mean 0 when every store draws fresh random bits — join the draw: d_i then
// lies in an interval of r_i = 2·(bound_i − b_i)/w_i, bound_i being the whole bound. The draws are independent (FlashInfer: one Philox counter per element), so Hoeffding's
// inequality bounds the mean d̄ over n elements without any distributional assumption:
//   P(|d̄ − μ| ≥ t) ≤ 2·exp(−2n²t² / Σ r_i²),   |μ| ≤ mean(b_i/w_i).
// The rounding is called biased when |d̄| > mean(b_i/w_i) + t with t = sqrt(Σ r_i²·ln(2/α)/(2n²)):
// an unbiased rounding is flagged with probability at most α (the false-alarm probability).
// Elements whose exact value lies below twice the format's smallest normal are left out and
// counted apart: there the stored value may be a flushed zero (FlashInfer's software stochastic
// rounding writes 0 for every |v| < 2^-14 in fp16), a deterministic error up to the value itself
// that would swamp the mean in ULPs of the subnormal spacing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "spec/contract.h"
#include "spec/format.h"
#include "verify/judge/external_check.h"
#include "verify/judge/tensor_report.h"

namespace ssmv::verify {

struct StochasticBias {
  int64_t elements = 0;         // elements counted (finite stored values, |exact| ≥ 2·smallest normal)
  int64_t below_normal = 0;     // elements left out: |exact| below twice the smallest normal
  double mean_ulps = 0;         // d̄: mean signed error in ULPs of the format at the exact value
  double carried_ulps = 0;      // mean(b_i/w_i): what the errors before the store may shift it by
  double deviation_ulps = 0;    // t: what the draws may shift it by, at false_alarm
  double false_alarm = 0;       // α
  bool biased = false;          // |d̄| > carried_ulps + deviation_ulps
  std::string text() const;     // one line: the figures and the finding
};

// exact: nearest doubles of the exact values; stored: the kernel's values in `f` (decoded);
// pre_store_bound: b_i, a bound on |v_i − e_i| (the error before the store). Elements whose
// stored value is NaN or Inf are not counted, nor (below_normal) those near the flush range. std::invalid_argument for sizes that differ or
// false_alarm outside (0, 1).
// draw_range (optional): per element the width of the interval the random part of the error lies
// in (absolute; default: the two neighbours of v_i, ulp_f(|e_i| + b_i)).
StochasticBias stochastic_bias(const std::vector<double>& exact, const std::vector<double>& stored, Format f,
                               const std::vector<double>& pre_store_bound, double false_alarm = 1e-6,
                               const std::vector<double>* draw_range = nullptr);

// The same over a judged tensor (judge_tensor's per-element vectors: ElementDetail::elements)
// stored with a stochastic rounding. Without `deterministic`: b_i from the element's bound,
// whose store term is a whole ULP at a magnitude of at least |e_i|:
// b_i = max(0, bound_i − ulp_f(|e_i|·(1 − 2^-50))) — exact for one store per element, and with
// several it counts the earlier stores' errors as carried (a loose test). With `deterministic`
// (the same tensor judged by the bound without its stochastic stores, check_external with the
// stored_state and output sources weighted 0) also b_i its bound and the draws' range
// max(2·(bound_i − b_i), ulp_f(|e_i| + b_i)); both tests run at α/2 and the smaller allowance
// is reported (biased when either flags: a false alarm of at most α).
StochasticBias tensor_stochastic_bias(const TensorReport& r, double false_alarm = 1e-6,
                                      const TensorReport* deterministic = nullptr);

// The bias test of every tensor of an external kernel's check `kc` (ElementDetail::elements)
// that its contract stores stochastically (the decode contract of a hand-off), at false_alarm α:
// for one kernel (family ssu) with the bound without its stochastic stores as `deterministic`
// (a second check, check_external with the stored_state and output sources weighted 0), for a
// hand-off without. Empty when the contract stores nothing stochastically. What ssmv check runs.
struct TensorBias {
  std::string tensor;
  StochasticBias bias;
};
std::vector<TensorBias> stochastic_biases(const Problem& p, const ExternalKernel& k, const KernelCheck& kc,
                                          const FormatValues& y, const FormatValues& final_states,
                                          double false_alarm = 1e-6);

// The tensors of a check that the contract stores stochastically: "final_state" when its
// stored_state point is stochastic, "y" when its output point is (each in the problem's
// format the point resolves to).
bool stores_stochastically(const Contract& c, const std::string& tensor, const Formats& f);

}  // namespace ssmv::verify
