#include "verify/cli/verdict_table.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "verify/reports/junit.h"
#include "verify/reports/report_text.h"

namespace ssmv::cli {

VerdictTable::VerdictTable(std::string command) {
  report_.ssmv_version = SSMV_VERSION;
  report_.command = std::move(command);
}

void VerdictTable::add(verify::ReportEntry entry) { report_.entries.push_back(std::move(entry)); }

void VerdictTable::add(verify::SideBySide comparison) { report_.comparisons.push_back(std::move(comparison)); }

namespace {

// Shown on the terminal per bad tensor (the Markdown report lists kKeptBadElements).
constexpr size_t kShownBadElements = 3;

std::string usage_cell(double usage) {
  char buf[16];
  if (std::isinf(usage)) std::snprintf(buf, sizeof buf, "inf");
  else std::snprintf(buf, sizeof buf, "%.3f", usage);
  return buf;
}

// A state tensor is rounded to its format at every stored step, so its elements are almost
// never the correctly rounded exact value: 0 % exact is what an honest kernel gives, and
// the verdict rests on the bound. y is rounded once, and is often exact.
bool state_like(const verify::TensorReport& r) { return r.name != "y"; }

}  // namespace

void VerdictTable::print(std::FILE* out) const {
  // Errors in units of each element's scale (its magnitude Σ|terms|): err/scale and ULPs of
  // the tensor's format at that scale; raw ULP distances are in the JSON report. Columns
  // as wide as their longest cell.
  struct Row {
    std::string cells[6];
    const verify::TensorReport* r;
  };
  std::vector<Row> rows;
  const std::string heads[6] = {"case", "kernel", "contract", "device", "tensor", "verdict"};
  size_t width[5] = {4, 6, 8, 6, 6};
  for (const verify::ReportEntry& e : report_.entries) {
    for (const verify::TensorReport& r : e.check.tensors) {
      Row row{{e.name, e.check.kernel, e.check.contract, e.check.device, r.name,
               std::string(verify::verdict_name(r.overall()))}, &r};
      for (size_t c = 0; c < 5; ++c) width[c] = std::max(width[c], row.cells[c].size());
      rows.push_back(std::move(row));
    }
  }
  const auto left = [&](size_t c, const std::string& text) { std::fprintf(out, "%-*s ", int(width[c]), text.c_str()); };
  for (size_t c = 0; c < 5; ++c) left(c, heads[c]);
  std::fprintf(out, "%9s %8s %10s %10s %7s  %s\n", "elements", "% exact", "err/scale", "ULP@scale", "usage", "verdict");
  bool zero_exact_state = false;
  for (const Row& row : rows) {
    const verify::TensorReport& r = *row.r;
    const double exact = 100.0 * double(r.count(verify::Verdict::exact)) / double(r.elements ? r.elements : 1);
    for (size_t c = 0; c < 5; ++c) left(c, row.cells[c]);
    std::fprintf(out, "%9lld %7.1f%% %10s %10s %7s  %s%s\n", (long long)r.elements, exact,
                 verify::err_over_scale_text(r).c_str(), verify::ulps_at_scale_text(r).c_str(),
                 usage_cell(r.max_bound_usage).c_str(), row.cells[5].c_str(),
                 r.ok() && r.elements > 0 && exact < 0.05 && state_like(r) ? " *" : "");  // printed 0.0%
    zero_exact_state = zero_exact_state || (r.ok() && r.elements > 0 && exact < 0.05 && state_like(r));
    const std::string sources = verify::bound_sources_text(r);
    if (!sources.empty()) std::fprintf(out, "    %s\n", sources.c_str());
  }
  if (zero_exact_state) {
    std::fprintf(out, "* 0%% exact is expected of a state: it is rounded to its format at every stored step, so its "
                      "elements are\n  almost never the correctly rounded exact value; the verdict rests on the bound.\n");
  }
}

void VerdictTable::print_bad_elements(std::FILE* out) const {
  bool heading = false;
  for (const verify::ReportEntry& e : report_.entries) {
    for (const verify::TensorReport& r : e.check.tensors) {
      if (r.ok()) continue;
      if (!heading) {
        std::fprintf(out, "\nbad elements (the worst %zu of each tensor; --markdown FILE lists up to %zu):\n",
                     kShownBadElements, verify::kKeptBadElements);
      }
      heading = true;
      std::fprintf(out, "  %s, %s: %s\n", e.name.c_str(), r.name.c_str(), verify::bad_count_text(r).c_str());
      for (const std::string& line : verify::bad_element_lines(r, kShownBadElements)) {
        std::fprintf(out, "    %s\n", line.c_str());
      }
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

void VerdictTable::write_files(const std::string& json_path, const std::string& markdown_path,
                               const std::string& junit_path) const {
  if (!json_path.empty()) verify::write_report_json(json_path, report_);
  if (!markdown_path.empty()) verify::write_report_markdown(markdown_path, report_);
  if (!junit_path.empty()) verify::write_report_junit(junit_path, report_);
}

}  // namespace ssmv::cli
