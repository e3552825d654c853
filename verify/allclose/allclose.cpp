#include "verify/allclose/allclose.h"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace ssmv::verify {
namespace {

void same_size(size_t a, size_t b, const char* what) {
  if (a != b) {
    throw std::invalid_argument(std::string(what) + ": sizes differ (" + std::to_string(a) + " and " +
                                std::to_string(b) + ")");
  }
}

constexpr double kInf = std::numeric_limits<double>::infinity();

double ulp_above(double x) { return std::nextafter(x, kInf) - x; }

// After the max over elements, atol + rtol·|ref_i| may still round below d_i by half an ULP
// of the sum: raise `atol` (or `rtol`, scaled by 1/|ref_i|) by the largest such ULP among
// the failing elements until none fails (one round in practice).
void raise_until_none_fails(std::span<const double> deviation, std::span<const double> ref, double& rtol,
                            double& atol, bool raise_rtol) {
  for (int round = 0; round < 64 && tolerance_violations(deviation, ref, rtol, atol) > 0; ++round) {
    double step = 0;
    for (size_t i = 0; i < ref.size(); ++i) {
      const double allowed = atol + rtol * std::fabs(ref[i]);
      if (deviation[i] <= allowed) continue;
      step = std::max(step, raise_rtol ? ulp_above(allowed) / std::fabs(ref[i]) : ulp_above(allowed));
    }
    (raise_rtol ? rtol : atol) += step;
  }
}

}  // namespace

Tolerance mamba_ssm_tolerance(Format output) {
  switch (output) {
    case Format::fp32: return {3e-4, 1e-3};
    case Format::bf16: return {1e-2, 5e-2};
    case Format::fp16: return {5e-3, 1e-2};
    case Format::int16_scaled: break;
  }
  throw std::invalid_argument("mamba_ssm_tolerance: no tolerance for " + std::string(format_name(output)) +
                              " (mamba_ssm's tests compare fp32, bf16 and fp16 tensors)");
}

std::vector<double> deviations(std::span<const double> kernel, std::span<const double> ref) {
  same_size(kernel.size(), ref.size(), "deviations");
  std::vector<double> d(kernel.size());
  for (size_t i = 0; i < d.size(); ++i) d[i] = std::fabs(kernel[i] - ref[i]);
  return d;
}

int64_t tolerance_violations(std::span<const double> deviation, std::span<const double> ref, double rtol,
                             double atol) {
  same_size(deviation.size(), ref.size(), "tolerance_violations");
  int64_t n = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    if (!(deviation[i] <= atol + rtol * std::fabs(ref[i]))) ++n;
  }
  return n;
}

int64_t allclose_violations(std::span<const double> kernel, std::span<const double> ref, double rtol, double atol) {
  const std::vector<double> d = deviations(kernel, ref);
  return tolerance_violations(d, ref, rtol, atol);
}

double smallest_atol(std::span<const double> deviation, std::span<const double> ref, double rtol) {
  same_size(deviation.size(), ref.size(), "smallest_atol");
  double atol = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    if (!std::isfinite(deviation[i])) return kInf;
    atol = std::max(atol, deviation[i] - rtol * std::fabs(ref[i]));
  }
  raise_until_none_fails(deviation, ref, rtol, atol, /*raise_rtol=*/false);
  return atol;
}

double smallest_rtol(std::span<const double> deviation, std::span<const double> ref, double atol) {
  same_size(deviation.size(), ref.size(), "smallest_rtol");
  double rtol = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    if (!std::isfinite(deviation[i])) return kInf;
    if (deviation[i] <= atol) continue;
    if (ref[i] == 0) return kInf;
    rtol = std::max(rtol, (deviation[i] - atol) / std::fabs(ref[i]));
  }
  raise_until_none_fails(deviation, ref, rtol, atol, /*raise_rtol=*/true);
  return rtol;
}

}  // namespace ssmv::verify
