#include "verify/cli/verdict_table.h"

#include <cmath>

namespace ssmv::cli {

VerdictTable::VerdictTable(std::string command) {
  report_.ssmv_version = SSMV_VERSION;
  report_.command = std::move(command);
}

void VerdictTable::add(verify::ReportEntry entry) { report_.entries.push_back(std::move(entry)); }

void VerdictTable::print(std::FILE* out) const {
  std::fprintf(out, "%-15s %-29s %-8s %-16s %9s %8s %10s %10s %7s  %s\n", "kernel", "contract",
               "device", "tensor", "elements", "% exact", "ULP p99", "ULP max", "usage", "verdict");
  for (const verify::ReportEntry& e : report_.entries) {
    const verify::KernelCheck& kc = e.check;
    for (const verify::TensorReport& r : kc.tensors) {
      const double exact = 100.0 * double(r.count(verify::Verdict::exact)) / double(r.elements ? r.elements : 1);
      char usage[16];
      if (std::isinf(r.max_bound_usage)) std::snprintf(usage, sizeof usage, "inf");
      else std::snprintf(usage, sizeof usage, "%.3f", r.max_bound_usage);
      const std::string verdict(verify::verdict_name(r.overall()));
      std::fprintf(out, "%-15s %-29s %-8s %-16s %9lld %7.1f%% %10lld %10lld %7s  %s\n", kc.kernel.c_str(),
                   kc.contract.c_str(), kc.device.c_str(), r.name.c_str(), (long long)r.elements, exact,
                   (long long)r.ulp_p99, (long long)r.ulp_max, usage, verdict.c_str());
    }
  }
}

void VerdictTable::write_files(const std::string& json_path, const std::string& markdown_path) const {
  if (!json_path.empty()) verify::write_report_json(json_path, report_);
  if (!markdown_path.empty()) verify::write_report_markdown(markdown_path, report_);
}

}  // namespace ssmv::cli
