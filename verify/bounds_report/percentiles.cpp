#include "verify/bounds_report/percentiles.h"

#include <algorithm>
#include <cmath>

namespace ssmv::verify {

Percentiles percentiles(std::vector<std::pair<double, int64_t>> v) {
  Percentiles p;
  p.count = int64_t(v.size());
  if (v.empty()) return p;
  const auto at_rank = [&](double q, double& value, int64_t& index) {
    const int64_t rank = std::max<int64_t>(1, int64_t(std::ceil(q * double(v.size()))));
    std::nth_element(v.begin(), v.begin() + (rank - 1), v.end());
    value = v[size_t(rank - 1)].first;
    index = v[size_t(rank - 1)].second;
  };
  at_rank(0.5, p.p50, p.at_p50);
  at_rank(0.99, p.p99, p.at_p99);
  at_rank(1.0, p.max, p.at_max);
  return p;
}

}  // namespace ssmv::verify
