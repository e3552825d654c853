#include "verify/bounds_report/percentiles.h"

#include <algorithm>

namespace ssmv::verify {

Percentiles percentiles(std::vector<std::pair<double, int64_t>> v) {
  Percentiles p;
  p.count = int64_t(v.size());
  if (v.empty()) return p;
  // Rank ⌈percent·n/100⌉ in integers (0.99·n in double can land just above an integer).
  const auto at_rank = [&](int64_t percent, double& value, int64_t& index) {
    const int64_t n = int64_t(v.size());
    const int64_t rank = std::max<int64_t>(1, (percent * n + 99) / 100);
    std::nth_element(v.begin(), v.begin() + (rank - 1), v.end());
    value = v[size_t(rank - 1)].first;
    index = v[size_t(rank - 1)].second;
  };
  at_rank(50, p.p50, p.at_p50);
  at_rank(99, p.p99, p.at_p99);
  at_rank(100, p.max, p.at_max);
  return p;
}

}  // namespace ssmv::verify
