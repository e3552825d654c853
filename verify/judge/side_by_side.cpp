#include "verify/judge/side_by_side.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace ssmv::verify {

bool SideBySide::explained_all() const {
  return std::all_of(tensors.begin(), tensors.end(), [](const SideBySideTensor& t) { return t.explained_all(); });
}

SideBySideTensor compare_tensors(const TensorReport& a, const TensorReport& b, const TensorLayout& layout) {
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
    double divergence = HUGE_VAL;
    if (std::isfinite(va) && std::isfinite(vb)) {
      // Both are format values (doubles); the double difference errs by at most half an ULP
      // of itself, so nudging up by 2^-52 relative makes it an upper bound (as verdict.cpp).
      divergence = std::fabs(va - vb) * (1 + 0x1p-52);
      t.ulp_max = std::max(t.ulp_max, ulp_distance(f, x, y));
      const double scale = i < a.scales.size() ? a.scales[i] : 0.0;
      t.max_divergence_over_scale =
          std::max(t.max_divergence_over_scale, scale > 0 ? divergence / scale : divergence > 0 ? HUGE_VAL : 0.0);
    }
    const bool explained = divergence <= allowed;
    ++(explained ? t.explained : t.unexplained);
    const double usage = allowed > 0 ? divergence / allowed : divergence > 0 ? HUGE_VAL : 0;
    t.max_usage = std::max(t.max_usage, usage);
    // Unexplained elements outrank explained ones; then the larger usage.
    const bool better = t.worst.index < 0 || (!explained && !worst_unexplained) ||
                        (explained == !worst_unexplained && usage > t.worst.usage);
    if (better) {
      worst_unexplained = !explained;
      t.worst = DivergentElement{int64_t(i), {}, x, y, a.exact_nearest[i], a.bounds[i], b.bounds[i], divergence, usage};
    }
  }
  if (t.worst.index >= 0) t.worst.coords = layout.coords(t.worst.index);
  return t;
}

SideBySide side_by_side(std::string name, const KernelCheck& a, const KernelCheck& b, const Problem& problem) {
  SideBySide s;
  s.name = std::move(name);
  s.kernel_a = a.kernel;
  s.contract_a = a.contract;
  s.device_a = a.device;
  s.kernel_b = b.kernel;
  s.contract_b = b.contract;
  s.device_b = b.device;
  for (const TensorReport& ta : a.tensors) {
    for (const TensorReport& tb : b.tensors) {
      if (ta.name != tb.name) continue;
      const TensorLayout layout = ta.name == "y" ? y_layout(problem) : state_layout(problem, ta.elements);
      s.tensors.push_back(compare_tensors(ta, tb, layout));
    }
  }
  if (s.tensors.empty()) {
    throw std::invalid_argument("side by side '" + s.name + "': " + a.kernel + " and " + b.kernel +
                                " have no tensor in common");
  }
  return s;
}

}  // namespace ssmv::verify
