#include "verify/cli/verdict_table.h"

#include <cmath>

namespace ssmv::cli {

void VerdictTable::add(const std::string& case_name, verify::KernelCheck check) {
  checks_.emplace_back(case_name, std::move(check));
}

bool VerdictTable::ok() const {
  for (const auto& [name, kc] : checks_) {
    if (!kc.ok()) return false;
  }
  return true;
}

void VerdictTable::print(std::FILE* out) const {
  std::fprintf(out, "%-15s %-29s %-6s %-16s %9s %8s %10s %10s %7s  %s\n", "kernel", "contract",
               "device", "tensor", "elements", "% exact", "ULP p99", "ULP max", "usage", "verdict");
  for (const auto& [name, kc] : checks_) {
    for (const verify::TensorReport& r : kc.tensors) {
      const double exact = 100.0 * double(r.count(verify::Verdict::exact)) / double(r.elements ? r.elements : 1);
      char usage[16];
      if (std::isinf(r.max_bound_usage)) std::snprintf(usage, sizeof usage, "inf");
      else std::snprintf(usage, sizeof usage, "%.3f", r.max_bound_usage);
      std::fprintf(out, "%-15s %-29s %-6s %-16s %9lld %7.1f%% %10lld %10lld %7s  %s\n", kc.kernel.c_str(),
                   kc.contract.c_str(), kc.device.c_str(), r.name.c_str(), (long long)r.elements, exact,
                   (long long)r.ulp_p99, (long long)r.ulp_max, usage,
                   std::string(verify::verdict_name(r.overall())).c_str());
    }
  }
}

}  // namespace ssmv::cli
