#include "properties/harness/feature_count.h"

#include <algorithm>

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
}  // namespace

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
}

}  // namespace ssmv::prop
