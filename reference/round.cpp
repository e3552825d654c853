#include "reference/round.h"

#include "reference/handed_value.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace ssmv::ref {

double round_to_odd_double(mpfr_srcptr x) {
  if (mpfr_nan_p(x)) return std::numeric_limits<double>::quiet_NaN();
  const double d = mpfr_get_d(x, MPFR_RNDZ);
  if (mpfr_cmp_d(x, d) == 0) return d;  // exact (also ±0, ±Inf)
  uint64_t bits;
  std::memcpy(&bits, &d, sizeof bits);
  if (d == 0.0) bits = (mpfr_signbit(x) ? (uint64_t{1} << 63) : 0) | 1;  // ±2^-1074
  bits |= 1;
  double r;
  std::memcpy(&r, &bits, sizeof r);
  return r;
}

Bits round_nearest_even(Format f, mpfr_srcptr x) {
  return ssmv::round_nearest_even(f, round_to_odd_double(x));
}

void set_value(mpfr_ptr dst, const HandedValue& v) {
  if (v.mpfr) {
    mpfr_set(dst, v.mpfr, MPFR_RNDN);
    return;
  }
  mpfr_set_d(dst, v.hi, MPFR_RNDN);
  mpfr_add_d(dst, dst, v.lo, MPFR_RNDN);
}

}  // namespace ssmv::ref
