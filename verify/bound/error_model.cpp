#include "verify/bound/error_model.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace ssmv::bound {

double gamma(int64_t k, double u) {
  const double ku = double(k) * u;
  if (ku >= 0.5) {
    throw std::invalid_argument("gamma: k*u = " + std::to_string(ku) +
                                " is not small; the first-order model does not apply");
  }
  return ku / (1.0 - ku);
}

int64_t product_sum_roundings(const Reduction& r, int64_t length) {
  return reduction_depth(r, length) + (r.order == ReductionOrder::tree && length >= 1 ? 1 : 0);
}

double double_recurrence_margin(int64_t steps) {
  const double u = 0x1p-53;
  const double m = gamma(5, u) * double(steps + 2) * std::pow(1 + gamma(4, u), double(steps));
  return m / (1 - m);
}

double underflow_floor(Format accumulation, bool flush_to_zero) {
  const FormatInfo& fi = format_info(accumulation);
  return flush_to_zero ? std::ldexp(1.0, fi.emin) : 0.5 * fi.min_subnormal;
}

double half_ulp_at_most(Format f, double magnitude) { return 0.5 * ulp_of(f, magnitude); }

double declared_rounding_error(const Contract& c, Point point, const Formats& f, Format storage, double magnitude) {
  for (const Rounding& r : c.roundings) {
    if (r.point != point) continue;
    const Format declared = resolve(r.format, f.input, f.state, f.output);
    if (declared == storage || format_info(declared).precision >= format_info(c.accumulation).precision) return 0;
    return half_ulp_at_most(declared, magnitude);
  }
  return 0;
}

double transcendental_error(const TranscendentalBudget& b, double arg, double value_magnitude, double arg_error) {
  if (arg < b.arg_lo || arg > b.arg_hi) {
    throw std::invalid_argument("transcendental '" + b.function + "' evaluated at " +
                                std::to_string(arg) + ", outside its budget's range [" +
                                std::to_string(b.arg_lo) + ", " + std::to_string(b.arg_hi) + "]");
  }
  const double ulps = b.ulp_const + b.ulp_per_abs_arg * (std::fabs(arg) + arg_error);
  return ulps * ulp_of(Format::fp32, value_magnitude) + b.abs_error;
}

const TranscendentalBudget& budget(const Contract& c, std::string_view function) {
  for (const TranscendentalBudget& b : c.transcendentals) {
    if (b.function == function) return b;
  }
  throw std::invalid_argument("contract '" + c.name + "' has no error budget for '" +
                              std::string(function) + "', which this problem evaluates");
}

}  // namespace ssmv::bound
