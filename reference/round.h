// Rounding an MPFR value to the formats of spec/format.h.
//
// Correct rounding goes through one implementation (spec/format.cpp's
// round_nearest_even from a double): the MPFR value is first rounded to double with
// round-to-odd, which is innocuous for any later round-to-nearest to p <= 51 bits
// (Boldo & Melquiond, "Emulation of FMA and correctly rounded sums: proved algorithms
// using rounding to odd", 2008); fp32/bf16/fp16 have p = 24/8/11 and their smallest
// subnormal (2^-149) lies far above double's subnormal range, so no double rounding occurs.
#pragma once

#include <mpfr.h>

#include "spec/format.h"

namespace ssmv::ref {

// x rounded to double toward zero, with the last bit forced to 1 when inexact.
double round_to_odd_double(mpfr_srcptr x);

// x correctly rounded to nearest, ties to even, in format f (overflow to ±Inf, sign of
// zero kept, NaN to the canonical quiet NaN).
Bits round_nearest_even(Format f, mpfr_srcptr x);

}  // namespace ssmv::ref
