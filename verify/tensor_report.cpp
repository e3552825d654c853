#include "verify/tensor_report.h"

#include <mpfr.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace ssmv::verify {

Verdict TensorReport::overall() const {
  for (Verdict v : {Verdict::invalid, Verdict::violation, Verdict::within_contract}) {
    if (count(v) > 0) return v;
  }
  return Verdict::exact;
}

std::vector<int64_t> y_coords(const Problem& p, int64_t index) {
  const Shape& s = p.shape;
  const int64_t dim = index % s.P, head = (index / s.P) % s.H, t = index / (s.P * s.H);
  const auto it = std::upper_bound(s.cu_seqlens.begin(), s.cu_seqlens.end(), t);
  const int64_t seq = int64_t(it - s.cu_seqlens.begin()) - 1;
  return {seq, t - s.cu_seqlens[seq], head, dim};
}

std::vector<int64_t> state_coords(const Problem& p, int64_t index) {
  const Shape& s = p.shape;
  return {index / (s.H * s.P * s.N), (index / (s.P * s.N)) % s.H, (index / s.N) % s.P, index % s.N};
}

const std::vector<std::string> kYCoordNames{"sequence", "token", "head", "dim"};
const std::vector<std::string> kStateCoordNames{"sequence", "head", "dim", "state"};

std::vector<Bits> format_bits(Format f, const std::vector<float>& values) {
  std::vector<Bits> b(values.size());
  for (size_t i = 0; i < values.size(); ++i) b[i] = round_nearest_even(f, values[i]);
  return b;
}

TensorReport judge_tensor(const std::string& name, Format format, const std::vector<Bits>& computed,
                          const ref::ExactValues& exact, const std::vector<double>& bounds,
                          const Problem& problem, CoordFn coords,
                          std::vector<std::string> coord_names) {
  if (computed.size() != exact.size() || bounds.size() != exact.size()) {
    throw std::invalid_argument("judge_tensor '" + name + "': " + std::to_string(computed.size()) +
                                " computed values, " + std::to_string(exact.size()) +
                                " exact values and " + std::to_string(bounds.size()) +
                                " bounds must agree");
  }
  TensorReport r;
  r.name = name;
  r.format = format;
  r.coord_names = std::move(coord_names);
  r.elements = int64_t(computed.size());
  std::vector<int64_t> ulps;
  ulps.reserve(computed.size());
  double worst_key = -1;
  for (size_t i = 0; i < computed.size(); ++i) {
    const Bits rounded = exact.rounded(format, i);
    const ElementJudgement j =
        judge(format, computed[i], rounded, exact.nearest[i], exact.certified_error[i], bounds[i]);
    ++r.counts[size_t(j.verdict)];
    if (j.verdict != Verdict::invalid) ulps.push_back(j.ulps);
    if (j.verdict != Verdict::invalid) r.max_bound_usage = std::max(r.max_bound_usage, j.bound_usage);
    // Invalid elements rank above every finite usage.
    const double key = j.verdict == Verdict::invalid ? HUGE_VAL : j.bound_usage;
    const double v = decode(format, computed[i]);
    if (std::isfinite(v)) {
      const double diff = std::fabs(v - exact.nearest[i]);
      const double rel = exact.nearest[i] != 0 ? diff / std::fabs(exact.nearest[i]) : diff > 0 ? HUGE_VAL : 0;
      if (r.max_abs_difference.index < 0 || diff > r.max_abs_difference.value) {
        r.max_abs_difference = {int64_t(i), {}, diff};
      }
      if (r.max_rel_difference.index < 0 || rel > r.max_rel_difference.value) {
        r.max_rel_difference = {int64_t(i), {}, rel};
      }
      if (i < exact.magnitude.size()) {
        const double scale = exact.magnitude[i];
        const double over = scale > 0 ? diff / scale : diff > 0 ? HUGE_VAL : 0;
        const double at_scale = diff / ulp_of(format, scale);
        if (r.max_err_over_scale.index < 0 || over > r.max_err_over_scale.value) {
          r.max_err_over_scale = {int64_t(i), {}, over};
        }
        if (r.max_ulps_at_scale.index < 0 || at_scale > r.max_ulps_at_scale.value) {
          r.max_ulps_at_scale = {int64_t(i), {}, at_scale};
        }
      }
    }
    if (key > worst_key) {
      worst_key = key;
      r.worst = WorstElement{int64_t(i), coords(problem, int64_t(i)), computed[i], rounded,
                             exact.nearest[i], "", bounds[i], j};
    }
  }
  for (DifferenceAt* d : {&r.max_abs_difference, &r.max_rel_difference, &r.max_err_over_scale, &r.max_ulps_at_scale}) {
    if (d->index >= 0) d->coords = coords(problem, d->index);
  }
  r.computed = computed;
  r.exact_nearest = exact.nearest;
  r.bounds = bounds;
  r.scales = exact.magnitude;
  if (r.count(Verdict::invalid) > 0) r.max_bound_usage = HUGE_VAL;
  if (!ulps.empty()) {
    std::sort(ulps.begin(), ulps.end());
    const auto at = [&](double q) { return ulps[size_t(std::floor(q * double(ulps.size() - 1)))]; };
    r.ulp_p50 = at(0.50);
    r.ulp_p99 = at(0.99);
    r.ulp_max = ulps.back();
  }
  if (r.worst.index >= 0) {
    char buf[80];
    mpfr_snprintf(buf, sizeof buf, "%.40Rg", exact.value[size_t(r.worst.index)].backend().data());
    r.worst.exact_decimal = buf;
  }
  return r;
}

}  // namespace ssmv::verify
