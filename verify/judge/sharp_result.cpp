#include "verify/judge/sharp_result.h"

#include <cmath>
#include <cstdio>

namespace ssmv::verify {
namespace {

std::string ratio_text(double r) {
  if (std::isinf(r)) return "inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, r >= 100 ? "%.0f" : "%.2f", r);
  return buf;
}

}  // namespace

std::string SharpResult::text() const {
  if (!evaluated) return "not evaluated: " + why_not;
  char buf[256];
  std::string out = suspicious ? "SUSPICIOUS" : "not suspicious";
  std::snprintf(buf, sizeof buf, ": error energy %s× what the contract's rounding model gives (%s)",
                ratio_text(whole.ratio).c_str(), allowed.c_str());
  out += buf;
  if (worst.head >= 0) {
    std::snprintf(buf, sizeof buf, "; head %lld %s×", static_cast<long long>(worst.head), ratio_text(worst.ratio).c_str());
    out += buf;
  }
  std::snprintf(buf, sizeof buf, "; p ≤ %.3g (%d runs, margin %g, false alarm %g)", p_value_bound, runs, margin,
                false_alarm);
  out += buf;
  if (!attribution.empty()) {
    const SharpCandidate& b = attribution.front();
    std::snprintf(buf, sizeof buf, "; best explanation: %s (explains %.1f%%%s)", b.name.c_str(),
                  100.0 * b.explained, b.consistent ? ", consistent with the whole error" : "");
    out += buf;
  }
  return out;
}

}  // namespace ssmv::verify
