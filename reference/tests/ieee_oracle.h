// An IEEE-754 oracle for fp32/bf16/fp16 built from MPFR alone: it shares no code with
// spec/format.cpp or reference/round.cpp (only the format parameters p, emin, emax and
// the field widths from format_info). The tests compare the one implementation to it.
//
// Emulation (MPFR manual, mpfr_subnormalize and mpfr_check_range): a format with
// precision p and normal exponents [emin, emax] (value = 1.f * 2^e) is MPFR precision p
// with MPFR exponent range [emin - p + 2, emax + 1] (MPFR writes values as 0.1f * 2^E,
// so E = e + 1 and the smallest subnormal 2^(emin-p+1) has E = emin - p + 2).
#pragma once

#include <mpfr.h>

#include <string>

#include "spec/format.h"

namespace ssmv::ref::testing {

// Sets the MPFR exponent range for the scope, restores the previous one on exit.
class ScopedExponentRange {
 public:
  ScopedExponentRange(mpfr_exp_t emin, mpfr_exp_t emax);
  ~ScopedExponentRange();
  ScopedExponentRange(const ScopedExponentRange&) = delete;
  ScopedExponentRange& operator=(const ScopedExponentRange&) = delete;

 private:
  mpfr_exp_t saved_emin_, saved_emax_;
};

// An mpfr_t that clears itself.
struct Mpfr {
  explicit Mpfr(mpfr_prec_t prec) { mpfr_init2(v, prec); }
  ~Mpfr() { mpfr_clear(v); }
  Mpfr(const Mpfr&) = delete;
  Mpfr& operator=(const Mpfr&) = delete;
  mpfr_t v;
};

// The canonical quiet NaN: sign 0, exponent all ones, only the top mantissa bit set.
Bits oracle_canonical_nan(Format f);

// The exact value of a bit pattern, set into out (precision >= p), read field by field.
void oracle_value(Format f, Bits b, mpfr_ptr out);
// The same as a double (every value of the three formats is a double).
double oracle_value_d(Format f, Bits b);

// x rounded to nearest, ties to even, with subnormals and IEEE overflow (values at or
// above max_finite + ulp(max_finite)/2 in magnitude go to ±Inf), sign of zero kept,
// NaN to the canonical NaN. x may lie far outside the format's and double's range.
Bits oracle_round(Format f, mpfr_srcptr x);
Bits oracle_round_d(Format f, double x);

// IEEE nextUp / nextDown of a pattern, by mpfr_nextabove / mpfr_nextbelow in the emulated
// format (then snapped up / down onto the subnormal grid). NaN in, the pattern back.
Bits oracle_next_up(Format f, Bits b);
Bits oracle_next_down(Format f, Bits b);

// "%Ra" of x, for failure messages.
std::string hex_string(mpfr_srcptr x);
// "0x3f80 (0x1p+0)": the pattern and its exact value.
std::string describe(Format f, Bits b);

}  // namespace ssmv::ref::testing
