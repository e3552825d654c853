#include "properties/harness/feature_count.h"

#include <algorithm>
#include <cmath>

namespace ssmv::prop {
namespace {
std::map<std::string, int64_t>& counts() {
  static std::map<std::string, int64_t> c;
  return c;
}
UpdateStats& stats() {
  static UpdateStats s;
  return s;
}
BoundUsageStats& usage_stats() {
  static BoundUsageStats s;
  return s;
}
}  // namespace

std::string bound_usage_bin(double usage, bool passed) {
  if (usage == 0) return "0";
  for (const auto& [edge, label] : {std::pair{0x1p-10, "2^-10"}, std::pair{0x1p-6, "2^-6"}, std::pair{0x1p-4, "2^-4"},
                                    std::pair{0x1p-2, "2^-2"}, std::pair{0x1p-1, "2^-1"}, std::pair{1.0, "1"}}) {
    if (usage <= edge) return label;
  }
  return passed ? "exact_overflow" : "inf";  // above 1, +inf, or NaN
}

void count_bound_usage(double usage, bool passed) {
  BoundUsageStats& s = usage_stats();
  ++s.cases;
  const std::string bin = bound_usage_bin(usage, passed);
  ++s.bins[bin];
  // A NaN usage stays the max once met: a finding, not a number to hide.
  if (bin != "exact_overflow" && !std::isnan(s.max) && !(usage <= s.max)) s.max = usage;
}
const BoundUsageStats& bound_usage_stats() { return usage_stats(); }

void count_updates(int64_t updates) {
  ++stats().cases;
  stats().total += updates;
  stats().max = std::max(stats().max, updates);
}
const UpdateStats& update_stats() { return stats(); }

void count_features(const std::string& family, const std::vector<std::string>& features,
                    const std::string& extra) {
  ++counts()[family];
  for (const std::string& f : features) ++counts()[f];
  if (!extra.empty()) ++counts()[extra];
}

void count_label(const std::string& label) { ++counts()[label]; }

const std::map<std::string, int64_t>& feature_counts() { return counts(); }
void reset_feature_counts() {
  counts().clear();
  stats() = UpdateStats{};
  usage_stats() = BoundUsageStats{};
}

}  // namespace ssmv::prop
