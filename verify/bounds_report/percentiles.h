// p50 / p99 / max of a sample, nearest rank (the value at rank ⌈q·n⌉ of the sorted sample),
// and the element where each sits: the summary `ssmv bounds` gives of every per-element ratio.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace ssmv::verify {

struct Percentiles {
  int64_t count = 0;                // elements summarised (0: the others are 0 and meaningless)
  double p50 = 0, p99 = 0, max = 0;
  int64_t at_p50 = -1, at_p99 = -1, at_max = -1;  // the element (its flat index) of each
};

// `values`: (value, element index) pairs; consumed (reordered). Ties keep no order.
Percentiles percentiles(std::vector<std::pair<double, int64_t>> values);

}  // namespace ssmv::verify
