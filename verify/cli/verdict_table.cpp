#include "verify/cli/verdict_table.h"

#include <cmath>

#include "verify/reports/report_text.h"

namespace ssmv::cli {

VerdictTable::VerdictTable(std::string command) {
  report_.ssmv_version = SSMV_VERSION;
  report_.command = std::move(command);
}

void VerdictTable::add(verify::ReportEntry entry) { report_.entries.push_back(std::move(entry)); }

void VerdictTable::add(verify::SideBySide comparison) { report_.comparisons.push_back(std::move(comparison)); }

void VerdictTable::print(std::FILE* out) const {
  // Errors in units of each element's scale (its magnitude Σ|terms|): err/scale and ULPs of
  // the tensor's format at that scale; raw ULP distances are in the JSON report.
  std::fprintf(out, "%-15s %-29s %-8s %-16s %9s %8s %10s %10s %7s  %s\n", "kernel", "contract",
               "device", "tensor", "elements", "% exact", "err/scale", "ULP@scale", "usage", "verdict");
  for (const verify::ReportEntry& e : report_.entries) {
    const verify::KernelCheck& kc = e.check;
    for (const verify::TensorReport& r : kc.tensors) {
      const double exact = 100.0 * double(r.count(verify::Verdict::exact)) / double(r.elements ? r.elements : 1);
      char usage[16];
      if (std::isinf(r.max_bound_usage)) std::snprintf(usage, sizeof usage, "inf");
      else std::snprintf(usage, sizeof usage, "%.3f", r.max_bound_usage);
      const std::string verdict(verify::verdict_name(r.overall()));
      std::fprintf(out, "%-15s %-29s %-8s %-16s %9lld %7.1f%% %10s %10s %7s  %s\n", kc.kernel.c_str(),
                   kc.contract.c_str(), kc.device.c_str(), r.name.c_str(), (long long)r.elements, exact,
                   verify::err_over_scale_text(r).c_str(), verify::ulps_at_scale_text(r).c_str(), usage,
                   verdict.c_str());
      const std::string sources = verify::bound_sources_text(r);
      if (!sources.empty()) std::fprintf(out, "    %s\n", sources.c_str());
    }
  }
}

namespace {

void print_comparison(std::FILE* out, const verify::SideBySide& c) {
  std::fprintf(out, "\n%s\n  a = %s / %s (%s), b = %s / %s (%s)\n", c.name.c_str(), c.kernel_a.c_str(),
               c.contract_a.c_str(), c.device_a.c_str(), c.kernel_b.c_str(), c.contract_b.c_str(),
               c.device_b.c_str());
  std::fprintf(out, "  %-12s %9s %10s %10s %12s %10s %7s  %-16s %-16s\n", "tensor", "elements", "identical",
               "explained", "unexplained", "|a-b|/scale", "usage", "verdict a", "verdict b");
  for (const verify::SideBySideTensor& t : c.tensors) {
    std::fprintf(out, "  %-12s %9lld %10lld %10lld %12lld %11s %7.3f  %-16s %-16s\n", t.name.c_str(),
                 (long long)t.elements, (long long)t.identical, (long long)t.explained, (long long)t.unexplained,
                 verify::scale_text(t.max_divergence_over_scale).c_str(), t.max_usage, std::string(verify::verdict_name(t.verdict_a)).c_str(),
                 std::string(verify::verdict_name(t.verdict_b)).c_str());
  }
  std::fprintf(out, "  %s\n", c.explained_all()
                                   ? "every divergence is within bound_a + bound_b: both are rounding paths"
                                   : "UNEXPLAINED divergence: at least one kernel is outside its contract");
}

}  // namespace

void VerdictTable::print_comparisons(std::FILE* out) const {
  for (const verify::SideBySide& c : report_.comparisons) print_comparison(out, c);
}

void VerdictTable::write_files(const std::string& json_path, const std::string& markdown_path) const {
  if (!json_path.empty()) verify::write_report_json(json_path, report_);
  if (!markdown_path.empty()) verify::write_report_markdown(markdown_path, report_);
}

}  // namespace ssmv::cli
