#include "verify/bound/error_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
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

double flushed_operand_floor(const Contract& c) {
  return c.flush_to_zero ? std::ldexp(1.0, format_info(c.accumulation).emin) : 0.0;
}

double half_ulp_at_most(Format f, double magnitude) { return 0.5 * ulp_of(f, magnitude); }

double scaled_rounding_error(Format f, double magnitude, double block_magnitude) {
  const double c = format_info(f).scaled_code_max;
  if (c == 0 || block_magnitude < magnitude) {
    std::string what = "scaled_rounding_error: ";
    what.append(format_name(f)).append(c == 0 ? " is not block-scaled" : ": the block magnitude is below the element's");
    throw std::invalid_argument(what);
  }
  if (!(block_magnitude < 0x1p126)) return std::numeric_limits<double>::infinity();
  const double d = block_magnitude / c * (1 + 0x1p-20);  // the decode scale, at most
  return (0.5 + c * 0x1p-20) * d + 0x1p-22 * magnitude + 0x1p-126 * (1 + d) + std::min(block_magnitude, 0x1p-112);
}

double rounding_error_at_most(Format f, RoundingMode mode, double magnitude, double magnitude_lo,
                              double block_magnitude) {
  if (block_scaled(f)) {
    if (mode != RoundingMode::nearest) {
      std::string what(format_name(f));
      what.append(" has no stochastic rounding (FlashInfer refuses rand_seed with state_scale)");
      throw std::invalid_argument(what);
    }
    if (block_magnitude == kNoBlock) {
      std::string what = "a rounding to the block-scaled ";
      what.append(format_name(f)).append(" needs its block's magnitude");
      throw std::invalid_argument(what);
    }
    return scaled_rounding_error(f, magnitude, block_magnitude);
  }
  if (mode == RoundingMode::nearest) return half_ulp_at_most(f, magnitude);
  const double min_normal = std::ldexp(1.0, format_info(f).emin);
  const double flushed = magnitude_lo < min_normal ? std::min(magnitude, min_normal) : 0.0;
  return std::max(ulp_of(f, magnitude), flushed);
}

double declared_rounding_error(const Contract& c, Point point, const Formats& f, Format storage, double magnitude) {
  for (const Rounding& r : c.roundings) {
    if (r.point != point) continue;
    const Format declared = resolve(r.format, f.input, f.state, f.output);
    if (declared == storage || format_info(declared).precision >= format_info(c.accumulation).precision) return 0;
    return rounding_error_at_most(declared, r.mode, magnitude);
  }
  return 0;
}

double store_rounding_error(const Contract& c, Point point, const Formats& f, Format storage, double magnitude,
                            double magnitude_lo, double block_magnitude) {
  RoundingMode mode = RoundingMode::nearest;
  for (const Rounding& r : c.roundings) {
    if (r.point == point && resolve(r.format, f.input, f.state, f.output) == storage) mode = r.mode;
  }
  return rounding_error_at_most(storage, mode, magnitude, magnitude_lo, block_magnitude) +
         declared_rounding_error(c, point, f, storage, magnitude);
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
