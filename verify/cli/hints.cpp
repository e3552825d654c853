#include "verify/cli/hints.h"

#include <algorithm>
#include <cstdio>

namespace ssmv::cli {

std::string softplus_hint(const Problem& p) {
  if (p.dt_softplus) return "";
  const int64_t H = p.shape.H;
  int64_t negative = 0;
  double lowest = 0;
  for (size_t i = 0; i < p.dt.size(); ++i) {
    const double delta = double(p.dt[i]) + (p.has_dt_bias() ? double(p.dt_bias[i % size_t(H)]) : 0.0);
    if (delta <= 0) ++negative;
    lowest = std::min(lowest, delta);
  }
  if (negative == 0) return "";
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "hint: judged without softplus, δ = dt + dt_bias is <= 0 at %lld of %zu (token, head) pairs (lowest "
                "%.4g); a kernel that applies softplus to dt (mamba_ssm's dt_softplus=True) needs --dt-softplus "
                "(or metadata ssmv.dt_softplus = true)",
                (long long)negative, p.dt.size(), lowest);
  return buf;
}

std::string narrower_format_hint(const std::string& tensor, Format declared, const std::vector<float>& values) {
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

}  // namespace ssmv::cli
