// The verdict table ssmv prints: one row per judged tensor of each kernel check.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "verify/kernel_check.h"

namespace ssmv::cli {

class VerdictTable {
 public:
  void add(const std::string& case_name, verify::KernelCheck check);
  void print(std::FILE* out) const;
  bool ok() const;
  const std::vector<std::pair<std::string, verify::KernelCheck>>& checks() const { return checks_; }

 private:
  std::vector<std::pair<std::string, verify::KernelCheck>> checks_;
};

}  // namespace ssmv::cli
