#include "verify/judge/stochastic_bias.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace ssmv::verify {

std::string StochasticBias::text() const {
  char buf[400];
  std::snprintf(buf, sizeof buf,
                "mean signed error %+.5f ULP over %lld elements (%lld below twice the smallest normal left "
                "out), allowed +-%.5f (%.5f carried from before the store + %.5f for the draws, Hoeffding, false "
                "alarm %.0e): %s",
                mean_ulps, static_cast<long long>(elements), static_cast<long long>(below_normal),
                carried_ulps + deviation_ulps, carried_ulps, deviation_ulps, false_alarm, biased ? "BIASED" : "unbiased");
  return buf;
}

StochasticBias stochastic_bias(const std::vector<double>& exact, const std::vector<double>& stored, Format f,
                               const std::vector<double>& pre_store_bound, double false_alarm,
                               const std::vector<double>* draw_range) {
  if (exact.size() != stored.size() || exact.size() != pre_store_bound.size() ||
      (draw_range != nullptr && draw_range->size() != exact.size())) {
    throw std::invalid_argument("stochastic_bias: exact, stored and pre_store_bound differ in size");
  }
  if (!(false_alarm > 0 && false_alarm < 1)) {
    throw std::invalid_argument("stochastic_bias: false_alarm must lie in (0, 1)");
  }
  StochasticBias r;
  r.false_alarm = false_alarm;
  double sum_d = 0, sum_carried = 0, sum_r2 = 0;
  const double near_flush = std::ldexp(2.0, format_info(f).emin);
  for (size_t i = 0; i < exact.size(); ++i) {
    if (!std::isfinite(stored[i])) continue;
    const double e = std::fabs(exact[i]);
    if (e < near_flush) {
      ++r.below_normal;
      continue;
    }
    const double w = ulp_of(f, e);
    const double r_i = (draw_range != nullptr ? (*draw_range)[i] : ulp_of(f, e + pre_store_bound[i])) / w;
    sum_d += (stored[i] - exact[i]) / w;
    sum_carried += pre_store_bound[i] / w;
    sum_r2 += r_i * r_i;
    ++r.elements;
  }
  if (r.elements == 0) return r;
  const double n = double(r.elements);
  r.mean_ulps = sum_d / n;
  r.carried_ulps = sum_carried / n;
  r.deviation_ulps = std::sqrt(sum_r2 * std::log(2 / false_alarm) / (2 * n * n));
  r.biased = std::fabs(r.mean_ulps) > r.carried_ulps + r.deviation_ulps;
  return r;
}

StochasticBias tensor_stochastic_bias(const TensorReport& r, double false_alarm, const TensorReport* deterministic) {
  const size_t n = r.computed.size();
  for (const TensorReport* t : {&r, deterministic}) {
    if (t != nullptr && (t->exact_nearest.size() != n || t->bounds.size() != n)) {
      throw std::invalid_argument("tensor_stochastic_bias: tensor '" + t->name +
                                  "' was judged without its per-element vectors (ElementDetail::elements)");
    }
  }
  std::vector<double> stored(n), carried(n), det(deterministic != nullptr ? n : 0), range(det.size());
  for (size_t i = 0; i < n; ++i) {
    stored[i] = decode(r.format, r.computed[i]);
    const double e = std::fabs(r.exact_nearest[i]) * (1 - 0x1p-50);
    carried[i] = std::max(0.0, r.bounds[i] - ulp_of(r.format, e));
    if (deterministic != nullptr) {
      det[i] = deterministic->bounds[i];
      range[i] = std::max(2 * (r.bounds[i] - det[i]), ulp_of(r.format, e + det[i]));
    }
  }
  if (deterministic == nullptr) return stochastic_bias(r.exact_nearest, stored, r.format, carried, false_alarm);
  // Both allowances, each at α/2 (the same mean d̄): flagged when d̄ exceeds the smaller, a false
  // alarm of at most α/2 + α/2 by the union bound. The first is the tighter for one store per
  // element, the second for several.
  StochasticBias one = stochastic_bias(r.exact_nearest, stored, r.format, carried, false_alarm / 2);
  StochasticBias several = stochastic_bias(r.exact_nearest, stored, r.format, det, false_alarm / 2, &range);
  StochasticBias& b = one.carried_ulps + one.deviation_ulps <= several.carried_ulps + several.deviation_ulps ? one : several;
  b.false_alarm = false_alarm;
  b.biased = one.biased || several.biased;
  return b;
}

std::vector<TensorBias> stochastic_biases(const Problem& p, const ExternalKernel& k, const KernelCheck& kc,
                                          const FormatValues& y, const FormatValues& final_states,
                                          double false_alarm) {
  const Contract& contract = k.family == "handoff" ? k.decode_contract : k.contract;
  std::vector<TensorBias> out;
  KernelCheck without_stores;
  for (size_t t = 0; t < kc.tensors.size(); ++t) {
    const TensorReport& r = kc.tensors[t];
    if (!stores_stochastically(contract, r.name, p.formats)) continue;
    if (k.family == "ssu" && without_stores.tensors.empty()) {
      bound::SourceWeights w;
      w[bound::BoundSource::stored_state] = 0;
      w[bound::BoundSource::output] = 0;
      without_stores = check_external(p, k, y, final_states, ElementDetail::elements, &w);
    }
    const TensorReport* det = t < without_stores.tensors.size() ? &without_stores.tensors[t] : nullptr;
    out.push_back({r.name, tensor_stochastic_bias(r, false_alarm, det)});
  }
  return out;
}

bool stores_stochastically(const Contract& c, const std::string& tensor, const Formats& f) {
  const Point point = tensor == "y" ? Point::output : Point::stored_state;
  const Format storage = tensor == "y" ? f.output : f.state;
  if (tensor != "y" && tensor != "final_state") return false;
  for (const Rounding& r : c.roundings) {
    if (r.point == point && r.mode == RoundingMode::stochastic && resolve(r.format, f.input, f.state, f.output) == storage) {
      return true;
    }
  }
  return false;
}

}  // namespace ssmv::verify
