#include "reference/tests/ieee_oracle.h"

#include <cstdio>
#include <stdexcept>

namespace ssmv::ref::testing {
namespace {

// Field layout read from the format's parameters: sign | exponent | p-1 mantissa bits,
// exponent bias = emax.
struct Fields {
  int p, emin, emax, total_bits;
  Bits sign_mask, exp_all_ones, mant_mask;
};

Fields fields(Format f) {
  const FormatInfo& fi = format_info(f);
  return Fields{fi.precision,
                fi.emin,
                fi.emax,
                fi.total_bits,
                Bits{1} << (fi.total_bits - 1),
                (Bits{1} << fi.exponent_bits) - 1,
                (Bits{1} << (fi.precision - 1)) - 1};
}

bool pattern_is_nan(const Fields& F, Bits b) {
  return ((b >> (F.p - 1)) & F.exp_all_ones) == F.exp_all_ones && (b & F.mant_mask) != 0;
}

// The MPFR exponent range that emulates the format (header comment).
ScopedExponentRange emulate(const Fields& F) {
  return ScopedExponentRange(F.emin - F.p + 2, F.emax + 1);
}

// The pattern of y, a value of the format (precision p, exponent within the format),
// read back with the exponent range restored to the default.
Bits bits_of(const Fields& F, mpfr_srcptr y) {
  const Bits sign = mpfr_signbit(y) ? F.sign_mask : 0;
  if (mpfr_nan_p(y)) throw std::logic_error("ieee_oracle: bits_of(NaN)");
  if (mpfr_inf_p(y)) return sign | (F.exp_all_ones << (F.p - 1));
  if (mpfr_zero_p(y)) return sign;
  const long e = static_cast<long>(mpfr_get_exp(y)) - 1;  // |y| in [2^e, 2^(e+1))
  const bool normal = e >= F.emin;
  const long shift = (F.p - 1) - (normal ? e : F.emin);
  Mpfr m(F.p + 2);
  mpfr_abs(m.v, y, MPFR_RNDN);
  mpfr_mul_2si(m.v, m.v, shift, MPFR_RNDN);  // exact: a power-of-two scaling
  if (!mpfr_integer_p(m.v) || (normal && e > F.emax)) {
    throw std::logic_error("ieee_oracle: value " + hex_string(y) + " is not in the format");
  }
  Bits mant = static_cast<Bits>(mpfr_get_ui(m.v, MPFR_RNDN));
  Bits exp_field = 0;
  if (normal) {
    exp_field = static_cast<Bits>(e + F.emax);
    mant -= Bits{1} << (F.p - 1);  // drop the implicit one
  }
  return sign | (exp_field << (F.p - 1)) | mant;
}

}  // namespace

ScopedExponentRange::ScopedExponentRange(mpfr_exp_t emin, mpfr_exp_t emax)
    : saved_emin_(mpfr_get_emin()), saved_emax_(mpfr_get_emax()) {
  // Widen first so that each call sees a valid range whatever the previous one was.
  mpfr_set_emin(mpfr_get_emin_min());
  mpfr_set_emax(mpfr_get_emax_max());
  if (mpfr_set_emin(emin) != 0 || mpfr_set_emax(emax) != 0) {
    throw std::logic_error("ieee_oracle: MPFR refused the exponent range");
  }
}

ScopedExponentRange::~ScopedExponentRange() {
  mpfr_set_emin(mpfr_get_emin_min());
  mpfr_set_emax(mpfr_get_emax_max());
  mpfr_set_emin(saved_emin_);
  mpfr_set_emax(saved_emax_);
}

Bits oracle_canonical_nan(Format f) {
  const Fields F = fields(f);
  return (F.exp_all_ones << (F.p - 1)) | (Bits{1} << (F.p - 2));
}

void oracle_value(Format f, Bits b, mpfr_ptr out) {
  const Fields F = fields(f);
  const Bits exp_field = (b >> (F.p - 1)) & F.exp_all_ones;
  const Bits mant = b & F.mant_mask;
  if (exp_field == F.exp_all_ones) {
    if (mant != 0) {
      mpfr_set_nan(out);
      return;
    }
    mpfr_set_inf(out, 1);
  } else if (exp_field == 0) {  // subnormal or zero: mant * 2^(emin - p + 1)
    mpfr_set_ui_2exp(out, mant, F.emin - F.p + 1, MPFR_RNDN);
  } else {  // (2^(p-1) + mant) * 2^(exp_field - bias - p + 1), bias = emax
    const unsigned long significand = (1ul << (F.p - 1)) | mant;
    mpfr_set_ui_2exp(out, significand, static_cast<long>(exp_field) - F.emax - F.p + 1,
                     MPFR_RNDN);
  }
  if (b & F.sign_mask) mpfr_neg(out, out, MPFR_RNDN);
}

double oracle_value_d(Format f, Bits b) {
  Mpfr v(format_info(f).precision);
  oracle_value(f, b, v.v);
  return mpfr_get_d(v.v, MPFR_RNDN);  // exact: format values are doubles
}

Bits oracle_round(Format f, mpfr_srcptr x) {
  if (mpfr_nan_p(x)) return oracle_canonical_nan(f);
  const Fields F = fields(f);
  Mpfr y(F.p);
  // Round to p bits in the wide default range, then bring into the format's range:
  // check_range handles overflow (RNDN: to ±Inf) and underflow below the smallest
  // subnormal, subnormalize re-rounds onto the subnormal grid. Both take the previous
  // ternary value t, which is how MPFR avoids double rounding at these two steps.
  int t = mpfr_set(y.v, x, MPFR_RNDN);
  {
    ScopedExponentRange range = emulate(F);
    t = mpfr_check_range(y.v, t, MPFR_RNDN);
    mpfr_subnormalize(y.v, t, MPFR_RNDN);
  }
  return bits_of(F, y.v);
}

Bits oracle_round_d(Format f, double x) {
  Mpfr m(53);
  mpfr_set_d(m.v, x, MPFR_RNDN);
  return oracle_round(f, m.v);
}

namespace {
Bits oracle_step(Format f, Bits b, bool up) {
  const Fields F = fields(f);
  if (pattern_is_nan(F, b)) return b;
  Mpfr y(F.p);
  oracle_value(f, b, y.v);
  {
    ScopedExponentRange range = emulate(F);
    // nextabove steps by 2^(E-p) even below the normal range; rounding that exact value
    // up (down) onto the subnormal grid gives the next subnormal.
    if (up) {
      mpfr_nextabove(y.v);
      mpfr_subnormalize(y.v, 0, MPFR_RNDU);
    } else {
      mpfr_nextbelow(y.v);
      mpfr_subnormalize(y.v, 0, MPFR_RNDD);
    }
  }
  return bits_of(F, y.v);
}
}  // namespace

Bits oracle_next_up(Format f, Bits b) { return oracle_step(f, b, true); }
Bits oracle_next_down(Format f, Bits b) { return oracle_step(f, b, false); }

std::string hex_string(mpfr_srcptr x) {
  char* s = nullptr;
  if (mpfr_asprintf(&s, "%Ra", x) < 0) return "<mpfr_asprintf failed>";
  std::string out(s);
  mpfr_free_str(s);
  return out;
}

std::string describe(Format f, Bits b) {
  char buf[64];
  std::snprintf(buf, sizeof buf, " (%a)", oracle_value_d(f, b));
  return hex_bits(f, b) + buf;
}

}  // namespace ssmv::ref::testing
