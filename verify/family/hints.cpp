#include "verify/family/hints.h"

#include <algorithm>
#include <cstdio>

namespace ssmv::family {
namespace {

template <class Values>
std::string hint(const std::string& tensor, Format declared, const Values& values) {
  // Few values say nothing: 16 nonzero values all in the narrower format by chance is
  // (2^-16)^16 for random fp32 data.
  constexpr int64_t kEnough = 16;
  const std::string option = tensor == "y" ? "--output-format" : "--state-format";
  // Only fp32 holds the others: fp16 and bf16 hold each other's values only in part.
  if (declared != Format::fp32) return "";
  for (const Format narrower : {Format::bf16, Format::fp16}) {
    int64_t nonzero = 0;
    const bool all = std::all_of(values.begin(), values.end(), [&](float v) {
      nonzero += v != 0;
      return representable(narrower, v);
    });
    if (all && nonzero >= kEnough) {
      const std::string name(format_name(narrower));
      return "hint: every value of " + tensor + " (declared fp32) is a " + name + " value: these look like " + name +
             " values stored wider: " + option + " " + name + "?";
    }
  }
  return "";
}

}  // namespace

std::string narrower_format_hint(const std::string& tensor, Format declared, const std::vector<float>& values) {
  return hint(tensor, declared, values);
}
std::string narrower_format_hint(const std::string& tensor, Format declared, const FormatValues& values) {
  return hint(tensor, declared, values);
}

}  // namespace ssmv::family
