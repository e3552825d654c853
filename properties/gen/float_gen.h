// Our own rapidcheck generators of floating-point values, one per ssmv format (spec/format.h).
// rapidcheck's arbitrary<float> never yields special values, knows nothing of bf16/fp16 and
// shrinks poorly; these draw values that are exact in their format and shrink toward the
// simplest values of it: +0, then ±1, then powers of two (mantissa bits dropped), then
// exponents halved toward 0 (magnitudes toward 1), then the sign made positive.
//
// Every value is held in a float (float holds every bf16, fp16 and fp32 value exactly).
#pragma once

#include <rapidcheck.h>

#include <cstdint>

#include "spec/format.h"

namespace ssmv::prop {

// What a shrink may do to a value. Shrinks never leave [-max_abs, max_abs] and never change
// a sign the generator promised (A ≤ 0 for the chunked bound, δ ≥ 0 without softplus).
struct ShrinkLimits {
  bool keep_sign = false;  // no sign flips (and 0 only with the right sign of zero: +0 if v>0)
  double max_abs = 0;      // 0: the format's max_finite
  bool nonzero = false;    // never shrink to 0 (a logarithm or a divisor follows)
};

// The shrink candidates of v (exact in f), simplest first; empty when v is already 0 or
// cannot get simpler. Every candidate is exact in f, strictly simpler by the order
// (nonzero, mantissa bits, |exponent|, sign), so shrinking terminates.
std::vector<float> simpler_values(Format f, float v, const ShrinkLimits& lim);

// v ~ N(mean, sigma²) drawn in double and rounded to nearest even in f (clamped to ±max_abs).
rc::Gen<float> normal_value(Format f, double mean, double sigma, const ShrinkLimits& lim = {});

// |v| log-uniform in [lo, hi] (0 < lo ≤ hi), rounded to f; negative when `negative`.
rc::Gen<float> log_uniform_value(Format f, double lo, double hi, bool negative,
                                 const ShrinkLimits& lim = {});

// Values from the edges of f, each class equally likely: ±0, ±1, powers of two in
// [2^emin_exp, 2^emax_exp], the binade edges next_down(2^k) / next_up(2^k), subnormals
// (when the range reaches them), the smallest normal, random finite bit patterns in the
// range, and ±Inf / NaN when `specials`. Magnitudes of finite values lie in
// [0, 2^(emax_exp+1)).
struct EdgeRange {
  int emin_exp = -1000;  // clamped to the format's smallest subnormal exponent
  int emax_exp = 1000;   // clamped to the format's emax
  bool specials = false; // include ±Inf and NaN (only where the consumer accepts them)
  bool keep_sign = false;
  bool negative = false; // with keep_sign: every value ≤ 0 (else ≥ 0)
};
rc::Gen<float> edge_value(Format f, const EdgeRange& range);

// Rounds a double to f as a float (round to nearest even, spec/format.h).
float to_format(Format f, double v);

}  // namespace ssmv::prop
