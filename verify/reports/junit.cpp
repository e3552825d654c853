#include "verify/reports/junit.h"

#include <cstdint>
#include <span>

#include "verify/reports/report_text.h"
#include "verify/tensor_file/tensor_file.h"

namespace ssmv::verify {
namespace {

// XML text and attribute values: the five reserved characters escaped; control characters
// other than tab and newline (not allowed in XML 1.0) as '?'.
std::string xml(const std::string& s) {
  std::string out;
  for (const char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') ? '?' : c;
    }
  }
  return out;
}

struct Case {
  std::string name, classname, failure_type, message, text;
};

std::string suite_xml(const std::string& name, const std::vector<Case>& cases) {
  size_t failures = 0;
  for (const Case& c : cases) failures += !c.failure_type.empty();
  std::string s = "  <testsuite name=\"" + xml(name) + "\" tests=\"" + std::to_string(cases.size()) +
                  "\" failures=\"" + std::to_string(failures) + "\" errors=\"0\">\n";
  for (const Case& c : cases) {
    s += "    <testcase classname=\"" + xml(c.classname) + "\" name=\"" + xml(c.name) + "\"";
    if (c.failure_type.empty()) {
      s += "/>\n";
      continue;
    }
    s += ">\n      <failure type=\"" + xml(c.failure_type) + "\" message=\"" + xml(c.message) + "\">" + xml(c.text) +
         "</failure>\n    </testcase>\n";
  }
  return s + "  </testsuite>\n";
}

}  // namespace

std::string report_to_junit(const Report& r) {
  std::string body;
  size_t tests = 0, failures = 0;
  const auto add_suite = [&](const std::string& name, const std::vector<Case>& cases) {
    tests += cases.size();
    for (const Case& c : cases) failures += !c.failure_type.empty();
    body += suite_xml(name, cases);
  };
  for (const ReportEntry& e : r.entries) {
    std::vector<Case> cases;
    for (const TensorReport& t : e.check.tensors) {
      Case c{t.name, e.check.kernel + " (" + e.check.contract + ", " + e.check.device + ")", "", "", ""};
      if (!t.ok()) {
        c.failure_type = std::string(verdict_name(t.overall()));
        c.message = t.name + ": " + bad_count_text(t);
        for (const std::string& line : worst_element_lines(t)) c.text += line + "\n";
        for (const std::string& line : bad_element_lines(t, kKeptBadElements)) c.text += line + "\n";
      } else if (t.sharp.suspicious) {
        c.failure_type = "SUSPICIOUS";
        c.message = t.name + ": " + t.sharp.text();
        c.text = "within the rigorous bound, but the error is larger than the contract's rounding model gives "
                 "(docs/sharp-verdicts.md)\n";
      }
      cases.push_back(std::move(c));
    }
    add_suite(e.name, cases);
  }
  for (const SideBySide& s : r.comparisons) {
    std::vector<Case> cases;
    for (const SideBySideTensor& t : s.tensors) {
      Case c{t.name, s.kernel_a + " vs " + s.kernel_b, "", "", ""};
      if (!t.explained_all()) {
        c.failure_type = "UNEXPLAINED";
        c.message = t.name + ": " + std::to_string(t.unexplained) + " of " + std::to_string(t.elements) +
                    " elements differ by more than bound_a + bound_b";
      }
      cases.push_back(std::move(c));
    }
    add_suite(s.name, cases);
  }
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"" + xml(r.command) + "\" tests=\"" +
         std::to_string(tests) + "\" failures=\"" + std::to_string(failures) + "\" errors=\"0\">\n" + body +
         "</testsuites>\n";
}

void write_report_junit(const std::string& path, const Report& r) {
  const std::string text = report_to_junit(r);
  tensor_file::write_file_atomically(
      path, std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
}

}  // namespace ssmv::verify
