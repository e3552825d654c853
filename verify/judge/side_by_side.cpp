#include "verify/judge/side_by_side.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace ssmv::verify {

bool SideBySide::explained_all() const {
  return std::all_of(tensors.begin(), tensors.end(), [](const SideBySideTensor& t) { return t.explained_all(); });
}

double divergence(double a, double b, double period, int64_t* k) {
  if (k) *k = 0;
  if (!std::isfinite(a) || !std::isfinite(b)) return HUGE_VAL;
  // Both are format values (doubles); the double difference errs by at most half an ULP of
  // itself, so nudging up by 2^-52 relative makes it an upper bound (as verdict.cpp).
  double d = std::fabs(a - b);
  if (period > 0 && d > period / 2) {
    // m·period in double: |m| half-ULPs of the product and of the subtraction, and the period's
    // own rounding (|period − 2π| ≤ 2^-51 for 2π) times |m|; |m|·2^-48 covers them for periods
    // below 8 (ULP 2^-50) and the values' magnitudes below 2^20.
    const double m = std::nearbyint(d / period);
    d = std::fabs(d - m * period) + m * 0x1p-48;
    if (k) *k = int64_t(m);
  }
  return d * (1 + 0x1p-52);
}

SideBySideTensor compare_tensors(const TensorReport& a, const TensorReport& b, const ElementMap& map) {
  if (a.name != b.name || a.format != b.format || a.computed.size() != b.computed.size() ||
      a.bounds.size() != a.computed.size() || b.bounds.size() != b.computed.size()) {
    throw std::invalid_argument("side by side: tensor '" + a.name + "' (" + std::string(format_name(a.format)) + ", " +
                                std::to_string(a.computed.size()) + " values, " + std::to_string(a.bounds.size()) +
                                " bounds) and '" + b.name + "' (" + std::string(format_name(b.format)) + ", " +
                                std::to_string(b.computed.size()) + " values, " + std::to_string(b.bounds.size()) +
                                " bounds) do not match");
  }
  SideBySideTensor t;
  t.name = a.name;
  t.format = a.format;
  t.coord_names = a.coord_names;
  t.elements = int64_t(a.computed.size());
  t.verdict_a = a.overall();
  t.verdict_b = b.overall();
  t.bound_usage_a = a.max_bound_usage;
  t.bound_usage_b = b.max_bound_usage;
  const Format f = a.format;
  bool worst_unexplained = false;
  for (size_t i = 0; i < a.computed.size(); ++i) {
    const Bits x = a.computed[i], y = b.computed[i];
    if (x == y) {
      ++t.identical;
      continue;
    }
    const double va = decode(f, x), vb = decode(f, y);
    const double allowed = a.bounds[i] + b.bounds[i];
    int64_t turns = 0;
    const double gap = divergence(va, vb, map.period, &turns);
    if (std::isfinite(gap)) {
      // ULPs across a turn of the circle say nothing of the distance: counted within one turn.
      if (turns == 0) t.ulp_max = std::max(t.ulp_max, ulp_distance(f, x, y));
      const double scale = i < a.scales.size() ? a.scales[i] : 0.0;
      t.max_divergence_over_scale =
          std::max(t.max_divergence_over_scale, scale > 0 ? gap / scale : gap > 0 ? HUGE_VAL : 0.0);
    }
    const bool explained = gap <= allowed;
    ++(explained ? t.explained : t.unexplained);
    const double usage = allowed > 0 ? gap / allowed : gap > 0 ? HUGE_VAL : 0;
    t.max_usage = std::max(t.max_usage, usage);
    // Unexplained elements outrank explained ones; then the larger usage.
    const bool better = t.worst.index < 0 || (!explained && !worst_unexplained) ||
                        (explained == !worst_unexplained && usage > t.worst.usage);
    if (better) {
      worst_unexplained = !explained;
      t.worst = DivergentElement{int64_t(i), {}, x, y, a.exact_nearest[i], a.bounds[i], b.bounds[i], gap, usage};
    }
  }
  if (t.worst.index >= 0) t.worst.coords = map.layout.coords(t.worst.index);
  return t;
}

SideBySide side_by_side(std::string name, const KernelCheck& a, const KernelCheck& b, const std::vector<ElementMap>& maps) {
  if (maps.size() != a.tensors.size()) {
    throw std::invalid_argument("side by side '" + name + "': " + std::to_string(maps.size()) + " element maps for " +
                                std::to_string(a.tensors.size()) + " tensors");
  }
  SideBySide s;
  s.name = std::move(name);
  s.kernel_a = a.kernel;
  s.contract_a = a.contract;
  s.device_a = a.device;
  s.kernel_b = b.kernel;
  s.contract_b = b.contract;
  s.device_b = b.device;
  for (size_t i = 0; i < a.tensors.size(); ++i) {
    for (const TensorReport& tb : b.tensors) {
      if (a.tensors[i].name == tb.name) s.tensors.push_back(compare_tensors(a.tensors[i], tb, maps[i]));
    }
  }
  if (s.tensors.empty()) {
    throw std::invalid_argument("side by side '" + s.name + "': " + a.kernel + " and " + b.kernel +
                                " have no tensor in common");
  }
  return s;
}

SideBySide side_by_side(std::string name, const KernelCheck& a, const KernelCheck& b, const Problem& problem) {
  std::vector<ElementMap> maps;
  for (const TensorReport& t : a.tensors) {
    maps.push_back({t.name == "y" ? y_layout(problem) : state_layout(problem, t.elements), 0});
  }
  return side_by_side(std::move(name), a, b, maps);
}

}  // namespace ssmv::verify
