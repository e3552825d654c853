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
                               const std::vector<double>& pre_store_bound, double false_alarm) {
  if (exact.size() != stored.size() || exact.size() != pre_store_bound.size()) {
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
    const double r_i = ulp_of(f, e + pre_store_bound[i]) / w;
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

StochasticBias tensor_stochastic_bias(const TensorReport& r, double false_alarm) {
  const size_t n = r.computed.size();
  if (r.exact_nearest.size() != n || r.bounds.size() != n) {
    throw std::invalid_argument("tensor_stochastic_bias: tensor '" + r.name +
                                "' was judged without its per-element vectors (ElementDetail::elements)");
  }
  std::vector<double> stored(n), pre(n);
  for (size_t i = 0; i < n; ++i) {
    stored[i] = decode(r.format, r.computed[i]);
    const double e = std::fabs(r.exact_nearest[i]) * (1 - 0x1p-50);
    pre[i] = std::max(0.0, r.bounds[i] - ulp_of(r.format, e));
  }
  return stochastic_bias(r.exact_nearest, stored, r.format, pre, false_alarm);
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
