// The verdict table ssmv prints (one row per judged tensor of each kernel check), and the
// report it came from, which --json / --markdown write to files.
#pragma once

#include <cstdio>
#include <string>

#include "verify/reports/report.h"

namespace ssmv::cli {

class VerdictTable {
 public:
  explicit VerdictTable(std::string command);
  void add(verify::ReportEntry entry);
  void add(verify::SideBySide comparison);
  void print(std::FILE* out) const;
  void print_comparisons(std::FILE* out) const;
  // Per tensor with a VIOLATION or INVALID: how many, and the worst few with their index,
  // values, bound and usage (nothing when every tensor is within its contract).
  void print_bad_elements(std::FILE* out) const;
  bool ok() const { return report_.ok(); }
  // Writes the report as JSON, Markdown and/or JUnit XML (atomically); an empty path writes
  // nothing.
  void write_files(const std::string& json_path, const std::string& markdown_path, const std::string& junit_path) const;

 private:
  verify::Report report_;
};

}  // namespace ssmv::cli
