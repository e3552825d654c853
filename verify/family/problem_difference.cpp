#include "verify/family/problem_difference.h"

#include <bit>
#include <cstdio>
#include <tuple>

namespace ssmv::family {
namespace {

template <class Values>
std::string first_element_difference(const std::string& name, const Values& a, const Values& b) {
  if (a.size() != b.size()) {
    return "tensor '" + name + "': " + std::to_string(a.size()) + " vs " + std::to_string(b.size()) + " elements";
  }
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::bit_cast<uint32_t>(a[i]) != std::bit_cast<uint32_t>(b[i])) {
      char buf[96];
      std::snprintf(buf, sizeof buf, "element %zu: %a vs %a", i, double(a[i]), double(b[i]));
      return "tensor '" + name + "' " + buf;
    }
  }
  return "";
}

// "<what> differ: n1, n2 = a1, a2 vs b1, b2" when some entry's texts differ, else "".
std::string joined_difference(const std::string& what,
                              const std::vector<std::tuple<std::string, std::string, std::string>>& entries) {
  std::string names, left, right;
  bool differ = false;
  for (const auto& [name, a, b] : entries) {
    const std::string sep = names.empty() ? "" : ", ";
    names += sep + name;
    left += sep + a;
    right += sep + b;
    differ = differ || a != b;
  }
  return differ ? what + " differ: " + names + " = " + left + " vs " + right : "";
}

}  // namespace

std::string tensor_difference(const std::string& name, const std::vector<float>& a, const std::vector<float>& b) {
  return first_element_difference(name, a, b);
}
std::string tensor_difference(const std::string& name, const FormatValues& a, const FormatValues& b) {
  return first_element_difference(name, a, b);
}

std::string shape_difference(const std::vector<std::pair<std::string, std::pair<int64_t, int64_t>>>& dims) {
  std::vector<std::tuple<std::string, std::string, std::string>> entries;
  for (const auto& [name, v] : dims) entries.emplace_back(name, std::to_string(v.first), std::to_string(v.second));
  return joined_difference("shapes", entries);
}

std::string format_difference(const std::vector<std::pair<std::string, std::pair<Format, Format>>>& formats) {
  std::vector<std::tuple<std::string, std::string, std::string>> entries;
  for (const auto& [name, v] : formats) {
    entries.emplace_back(name, std::string(format_name(v.first)), std::string(format_name(v.second)));
  }
  return joined_difference("formats", entries);
}

}  // namespace ssmv::family
