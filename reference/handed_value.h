// One exact value as a tier of the reference hands it to a Sink (reference.h), within its
// certified_error of the exact value: the MPFR tier's variable at the check precision, or the
// fast tier's double-double hi + lo. The fast tier's form spares an MPFR variable and two
// MPFR operations per element (a 256-request decode dump's final states are 67 million of
// them), and its correct rounding is that of hi: a settled value is decided, so every value
// in its enclosure, hi and the check run's among them, rounds alike in each format
// (docs/reference-tiers.md, "What settled means").
#pragma once

#include <mpfr.h>

#include "spec/format.h"

namespace ssmv::ref {

struct HandedValue {
  mpfr_srcptr mpfr = nullptr;  // the MPFR tier's value; null: the fast tier's hi + lo
  double hi = 0, lo = 0;       // fast tier: hi = RN(hi + lo), the value's nearest double
  mpfr_prec_t bits = 0;        // fast tier: the check precision, at which hi + lo stands for the value
};

// The precision at which the value is an MPFR number (the check precision in both tiers).
inline mpfr_prec_t precision(const HandedValue& v) { return v.mpfr ? mpfr_get_prec(v.mpfr) : v.bits; }

// The value correctly rounded to nearest, ties to even, in f: round_nearest_even of the MPFR
// value (reference/round.h), or of hi for a fast-tier value (the same bits, as above). Inline:
// the judges round every element's value.
Bits round_nearest_even(Format f, mpfr_srcptr x);
inline Bits round_nearest_even(Format f, const HandedValue& v) {
  return v.mpfr ? round_nearest_even(f, v.mpfr) : ssmv::round_nearest_even(f, v.hi);
}

// dst = the value at dst's precision (precision(v) for the value itself): a copy of the MPFR tier's (exact at the same precision),
// or hi + lo in two correctly rounded operations (within 2^-prec·|hi + lo|; at the check
// precision this is the value the fast tier's certified_error covers).
void set_value(mpfr_ptr dst, const HandedValue& v);

}  // namespace ssmv::ref
