#include "properties/gen/float_gen.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "properties/gen/random_draw.h"

namespace ssmv::prop {
namespace {

double max_abs_of(Format f, const ShrinkLimits& lim) {
  return lim.max_abs > 0 ? lim.max_abs : format_info(f).max_finite;
}

bool acceptable(Format f, double c, double v, const ShrinkLimits& lim) {
  if (!representable(f, c) || !std::isfinite(c) || std::fabs(c) > max_abs_of(f, lim)) return false;
  if (lim.keep_sign && c != 0 && std::signbit(c) != std::signbit(v)) return false;
  return true;
}

// Number of mantissa bits below the leading one that are needed for |v| (0 for powers of two).
int mantissa_bits(double v) {
  int e;
  double m = std::frexp(std::fabs(v), &e);  // m in [0.5, 1)
  int bits = 0;
  while (m != std::floor(m)) {
    m *= 2;
    ++bits;
  }
  return std::max(0, bits - 1);
}

}  // namespace

float to_format(Format f, double v) { return float(round_value(f, v)); }

std::vector<float> simpler_values(Format f, float value, const ShrinkLimits& lim) {
  std::vector<float> out;
  const double v = value;
  if (v == 0 || !std::isfinite(v)) {
    if (std::isnan(v) || std::isinf(v)) out.push_back(lim.keep_sign ? std::copysign(0.0f, value) : 0.0f);
    return out;
  }
  auto add = [&](double c) {
    if (c == v || !acceptable(f, c, v, lim) || (lim.nonzero && c == 0)) return;
    if (std::find(out.begin(), out.end(), float(c)) == out.end()) out.push_back(float(c));
  };
  const double sign = std::signbit(v) ? -1.0 : 1.0;
  if (!lim.nonzero) add(lim.keep_sign ? sign * 0.0 : 0.0);
  add(sign);
  const int bits = mantissa_bits(v);
  int e;
  std::frexp(std::fabs(v), &e);
  e -= 1;  // |v| = 1.m · 2^e
  // Fewer mantissa bits: truncate toward zero to 0, 1, ..., bits-1 bits below the leading one.
  for (int keep = 0; keep < bits; keep = keep == 0 ? 1 : keep * 2) {
    const double q = std::ldexp(1.0, e - keep);
    add(sign * std::floor(std::fabs(v) / q) * q);
  }
  // Exponent toward 0 (magnitude toward 1), the mantissa kept: halve it, then one step.
  if (e != 0) {
    const int half = e / 2;  // rounds toward 0
    add(std::ldexp(v, half - e));
    add(std::ldexp(v, e > 0 ? -1 : 1));
  }
  if (!lim.keep_sign && sign < 0) add(-v);
  return out;
}

namespace {

rc::Gen<float> shrinking(Format f, ShrinkLimits lim, std::function<double(rc::Random&)> draw) {
  return rc::Gen<float>([f, lim, draw](const rc::Random& random, int) {
    rc::Random r = random;
    const double m = max_abs_of(f, lim);
    const float v = to_format(f, std::clamp(draw(r), -m, m));
    return rc::shrinkable::shrinkRecur(v, [f, lim](float x) {
      return rc::seq::fromContainer(simpler_values(f, x, lim));
    });
  });
}

}  // namespace

rc::Gen<float> normal_value(Format f, double mean, double sigma, const ShrinkLimits& lim) {
  return shrinking(f, lim, [mean, sigma](rc::Random& r) { return mean + sigma * draw_normal(r); });
}

rc::Gen<float> log_uniform_value(Format f, double lo, double hi, bool negative, const ShrinkLimits& lim) {
  return shrinking(f, lim, [lo, hi, negative](rc::Random& r) {
    const double v = std::exp(std::log(lo) + draw_uniform(r) * (std::log(hi) - std::log(lo)));
    return negative ? -v : v;
  });
}

rc::Gen<float> edge_value(Format f, const EdgeRange& range) {
  const FormatInfo& fi = format_info(f);
  const int sub_exp = fi.emin - fi.precision + 1;  // exponent of the smallest subnormal
  const int lo = std::max(range.emin_exp, sub_exp), hi = std::min(range.emax_exp, fi.emax);
  ShrinkLimits lim;
  lim.keep_sign = range.keep_sign;
  lim.max_abs = std::ldexp(1.0, hi + 1) > fi.max_finite ? fi.max_finite : std::ldexp(1.0, hi + 1);
  const EdgeRange rg = range;
  return rc::Gen<float>([f, lo, hi, sub_exp, lim, rg, fi](const rc::Random& random, int) {
    rc::Random r = random;
    const int classes = rg.specials ? 9 : 7;
    const int cls = int(r.next() % uint64_t(classes));
    const int k = lo + int(r.next() % uint64_t(hi - lo + 1));
    double v = 0;
    switch (cls) {
      case 0: v = 0; break;
      case 1: v = 1; break;
      case 2: v = std::ldexp(1.0, k); break;
      case 3: {  // a binade edge: the neighbour just below or above 2^k
        const Bits p = round_nearest_even(f, std::ldexp(1.0, k));
        v = decode(f, (r.next() & 1) ? next_down(f, p) : next_up(f, p));
        break;
      }
      case 4: {  // a subnormal, when the range reaches below the smallest normal
        const int top = std::min(hi, fi.emin - 1);
        if (lo > top) {
          v = std::ldexp(1.0, k);
          break;
        }
        const int64_t steps = int64_t(1) << (top - sub_exp + 1);  // subnormal multiples below 2^(top+1)
        v = std::ldexp(double(1 + int64_t(r.next() % uint64_t(steps - 1 > 0 ? steps - 1 : 1))), sub_exp);
        break;
      }
      case 5: v = std::ldexp(1.0, std::max(lo, fi.emin)); break;  // the smallest normal (or 2^lo)
      case 6: {  // a random pattern of the binade 2^k: random mantissa bits
        const double frac = double(r.next() >> 11) * 0x1p-53;
        v = std::ldexp(1.0 + frac, k);
        break;
      }
      case 7: v = std::numeric_limits<double>::infinity(); break;
      default: v = std::numeric_limits<double>::quiet_NaN(); break;
    }
    bool neg = (r.next() & 1) != 0;
    if (rg.keep_sign) neg = rg.negative;
    if (neg) v = -v;
    float out = std::isnan(v) ? std::numeric_limits<float>::quiet_NaN()
                : std::isinf(v) ? float(v)
                                : to_format(f, std::clamp(v, -lim.max_abs, lim.max_abs));
    if (!std::isnan(out) && std::fabs(out) > lim.max_abs && std::isfinite(out)) out = float(std::copysign(lim.max_abs, v));
    return rc::shrinkable::shrinkRecur(out, [f, lim](float x) {
      return rc::seq::fromContainer(simpler_values(f, x, lim));
    });
  });
}

}  // namespace ssmv::prop
