#include "verify/sharp/calibrated_test.h"

#include <algorithm>
#include <boost/math/distributions/chi_squared.hpp>
#include <cmath>
#include <limits>

namespace ssmv::sharp {

using verify::SharpResult;
using verify::SharpSlice;

namespace {

// The one-sided 99.9% upper confidence factor for a standard deviation estimated from `runs`
// samples: σ ≤ s·sqrt((runs − 1)/χ²_{runs−1}(0.001)) with probability 0.999.
double sd_factor(int runs) {
  const boost::math::chi_squared_distribution<double> chi(double(runs - 1));
  return std::sqrt(double(runs - 1) / boost::math::quantile(chi, 0.001));
}

SharpSlice slice_of(int64_t head, int64_t elements, double observed, const std::vector<double>& null, double factor) {
  SharpSlice s;
  s.head = head;
  s.elements = elements;
  s.observed = observed;
  double mean = 0;
  for (double q : null) mean += q;
  mean /= double(null.size());
  double var = 0;
  for (double q : null) var += (q - mean) * (q - mean);
  s.null_mean = mean;
  s.null_sd = std::sqrt(var / double(null.size() - 1));
  s.ratio = mean > 0 ? observed / mean : (observed > 0 ? std::numeric_limits<double>::infinity() : 0.0);
  if (mean > 0 && observed > mean) {
    const double sd = factor * s.null_sd;
    const double z = sd > 0 ? (observed - mean) / sd : std::numeric_limits<double>::infinity();
    s.p_bound = std::isinf(z) ? 0.0 : 1.0 / (1.0 + z * z);
  }
  return s;
}

}  // namespace

double total(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}

void decide(SharpResult& r, const std::vector<std::string>& allowed, const std::vector<std::vector<double>>& e,
            const std::vector<std::vector<double>>& null, const std::vector<int64_t>& elements, const SharpOptions& o) {
  const int64_t H = int64_t(elements.size());
  size_t best = 0;
  for (size_t ci = 1; ci < allowed.size(); ++ci) {
    if (total(e[ci]) < total(e[best])) best = ci;
  }
  r.evaluated = true;
  r.allowed = allowed[best];
  r.runs = o.runs;
  r.margin = o.margin;
  r.false_alarm = o.false_alarm;
  r.seed = o.seed;
  r.sd_factor = sd_factor(o.runs);
  std::vector<double> whole_null(null.size());
  for (size_t m = 0; m < null.size(); ++m) whole_null[m] = total(null[m]);
  int64_t n_all = 0;
  for (int64_t n : elements) n_all += n;
  r.whole = slice_of(-1, n_all, total(e[best]), whole_null, r.sd_factor);
  int64_t slices = 1;
  std::vector<SharpSlice> heads;
  for (int64_t h = 0; h < H; ++h) {
    if (elements[h] == 0) continue;
    std::vector<double> nh(null.size());
    for (size_t m = 0; m < null.size(); ++m) nh[m] = null[m][h];
    heads.push_back(slice_of(h, elements[h], e[best][h], nh, r.sd_factor));
    ++slices;
  }
  r.worst = r.whole;
  auto flagged = [&](const SharpSlice& s) {
    return s.null_mean > 0 && s.ratio > o.margin && s.p_bound * double(slices) <= o.false_alarm;
  };
  r.suspicious = flagged(r.whole);
  r.p_value_bound = std::min(1.0, r.whole.p_bound * double(slices));
  for (const SharpSlice& s : heads) {
    r.suspicious = r.suspicious || flagged(s);
    r.p_value_bound = std::min(r.p_value_bound, std::min(1.0, s.p_bound * double(slices)));
    if (s.null_mean > 0 && s.ratio > r.worst.ratio) r.worst = s;
  }
}

void attribute(verify::SharpResult& r, const std::vector<std::string>& names,
               const std::vector<std::string>& descriptions, const std::vector<double>& residuals,
               const SharpOptions& o) {
  for (size_t d = 0; d < names.size(); ++d) {
    verify::SharpCandidate cand;
    cand.name = names[d];
    cand.description = descriptions[d];
    cand.residual = residuals[d];
    cand.explained = r.whole.observed > 0 ? 1.0 - cand.residual / r.whole.observed : 0.0;
    cand.consistent = cand.residual <= o.margin * r.whole.null_mean;
    r.attribution.push_back(cand);
  }
  std::stable_sort(r.attribution.begin(), r.attribution.end(),
                   [](const verify::SharpCandidate& a, const verify::SharpCandidate& b) { return a.residual < b.residual; });
}

}  // namespace ssmv::sharp
