#include "properties/relations/agreement.h"

#include <bit>
#include <cmath>
#include <cstdio>

#include "fast/chunk_scan/chunk_scan.h"
#include "verify/run/kernel_check.h"

namespace ssmv::prop {

BoundedRun run_bounded(const Problem& p, const ref::ExactResult& exact, chunk_scan::ContractKind kind,
                       int64_t chunk_size) {
  chunk_scan::Config cfg;
  cfg.contract = kind;
  cfg.chunk_size = chunk_size;
  BoundedRun r;
  r.result = chunk_scan::run(p, Device::twin, cfg);
  r.bounds = verify::chunked_bounds_for(p, chunk_scan::contract(kind, chunk_size), exact);
  return r;
}

std::optional<CaseFailure> agree_within(const std::string& what, const std::vector<float>& a,
                                        const std::vector<double>& bound_a, const std::vector<float>& b,
                                        const std::vector<double>& bound_b, const std::vector<double>& extra) {
  if (a.size() != b.size() || a.size() != bound_a.size() || a.size() != bound_b.size() ||
      (!extra.empty() && extra.size() != a.size())) {
    return CaseFailure{"INVALID", what, what + ": the two runs' tensors have different sizes"};
  }
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::bit_cast<uint32_t>(a[i]) == std::bit_cast<uint32_t>(b[i])) continue;  // equal (also ±Inf)
    const double diff = std::fabs(double(a[i]) - double(b[i])) * (1 + 0x1p-52);
    const double allowed = bound_a[i] + bound_b[i] + (extra.empty() ? 0.0 : extra[i]);
    if (!(diff <= allowed)) {  // NaN differences fail too
      char buf[256];
      std::snprintf(buf, sizeof buf, "%s[%zu]: %a vs %a, |difference| %a > allowed %a (bounds %a + %a)",
                    what.c_str(), i, double(a[i]), double(b[i]), diff, allowed, bound_a[i], bound_b[i]);
      return CaseFailure{"VIOLATION", buf, what + ": the two runs differ by more than their bounds allow"};
    }
  }
  return std::nullopt;
}

std::optional<CaseFailure> same_bits(const std::string& what, const std::vector<float>& a,
                                     const std::vector<float>& b) {
  std::vector<Bits> ab(a.size()), bb(b.size());
  for (size_t i = 0; i < a.size(); ++i) ab[i] = std::bit_cast<uint32_t>(a[i]);
  for (size_t i = 0; i < b.size(); ++i) bb[i] = std::bit_cast<uint32_t>(b[i]);
  return same_bits(what, ab, bb);
}

std::optional<CaseFailure> same_bits(const std::string& what, const std::vector<Bits>& a,
                                     const std::vector<Bits>& b) {
  if (a.size() != b.size()) {
    return CaseFailure{"VIOLATION", what, what + ": sizes differ (" + std::to_string(a.size()) + " vs " +
                                              std::to_string(b.size()) + ")"};
  }
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "%s[%zu]: bits 0x%08x vs 0x%08x", what.c_str(), i, a[i], b[i]);
      return CaseFailure{"VIOLATION", buf, what + ": the bits differ (the relation allows 0 ULPs)"};
    }
  }
  return std::nullopt;
}

}  // namespace ssmv::prop
