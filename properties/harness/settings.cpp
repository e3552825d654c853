#include "properties/harness/settings.h"

#include <rapidcheck.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

#include "spec/splitmix.h"

namespace ssmv::prop {
namespace {


uint64_t fnv1a(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

int64_t parse_int(const char* var, const std::string& text) {
  size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty()) {
    throw std::invalid_argument(std::string(var) + " = '" + text + "' is not an integer");
  }
  return v;
}

double parse_seconds(const char* var, const std::string& text) {
  size_t used = 0;
  double v = -1;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty() || !(v >= 0)) {
    throw std::invalid_argument(std::string(var) + " = '" + text + "' is not a number of seconds >= 0");
  }
  return v;
}

}  // namespace

RunSettings settings_from_environment() {
  RunSettings s;
  if (const char* rc_params = std::getenv("RC_PARAMS")) {
    const std::string text = rc_params;
    rc::detail::Configuration defaults;
    defaults.testParams.seed = kDefaultRootSeed;
    defaults.testParams.maxSuccess = -1;  // sentinel: "not given"
    const rc::detail::Configuration c = rc::detail::configFromString(text, defaults);
    s.root_seed = c.testParams.seed;
    if (c.testParams.maxSuccess > 0) s.max_success_override = c.testParams.maxSuccess;
    s.max_size = std::min(c.testParams.maxSize, kMaxSize);
  }
  if (const char* campaign = std::getenv("SSMV_CAMPAIGN")) {
    const std::string v = campaign;
    if (v == "1") {
      s.multiplier = kCampaignMultiplier;
    } else if (!v.empty() && v != "0") {
      throw std::invalid_argument("SSMV_CAMPAIGN = '" + v + "': use 1 (campaign, 100x cases) or 0");
    }
  }
  if (const char* shard = std::getenv("SSMV_SHARD")) {
    const std::string v = shard;
    const size_t slash = v.find('/');
    if (slash == std::string::npos) {
      throw std::invalid_argument("SSMV_SHARD = '" + v + "': expected i/N, e.g. 0/4");
    }
    s.shard = parse_int("SSMV_SHARD (i)", v.substr(0, slash));
    s.shards = parse_int("SSMV_SHARD (N)", v.substr(slash + 1));
    if (s.shards < 1 || s.shard < 0 || s.shard >= s.shards) {
      throw std::invalid_argument("SSMV_SHARD = '" + v + "': need 0 <= i < N");
    }
  }
  if (const char* dir = std::getenv("SSMV_CEX_DIR"); dir && *dir) s.cex_dir = dir;
  if (const char* dir = std::getenv("SSMV_PROP_RESULTS"); dir && *dir) s.results_dir = dir;
  if (const char* steps = std::getenv("SSMV_SHRINK_STEPS"); steps && *steps) {
    s.shrink_steps = parse_int("SSMV_SHRINK_STEPS", steps);
    if (s.shrink_steps < 0) throw std::invalid_argument(std::string("SSMV_SHRINK_STEPS = '") + steps + "': need >= 0");
  }
  if (const char* secs = std::getenv("SSMV_SHRINK_SECONDS"); secs && *secs) {
    s.shrink_seconds = parse_seconds("SSMV_SHRINK_SECONDS", secs);
  }
  return s;
}

uint64_t shard_seed(uint64_t root, std::string_view property_id, int64_t shard) {
  return splitmix64(splitmix64(root ^ fnv1a(property_id)) + uint64_t(shard));
}

int64_t shard_cases(int64_t base, const RunSettings& s) {
  const int64_t total = (s.max_success_override > 0 ? s.max_success_override : base) * s.multiplier;
  return total / s.shards + (s.shard < total % s.shards ? 1 : 0);
}

}  // namespace ssmv::prop
