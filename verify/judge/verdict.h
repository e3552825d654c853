// Per-element verdicts: is a kernel's value the correctly rounded exact value, a
// rounding-path difference its contract allows, a bug, or not a valid value at all?
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>

#include "spec/format.h"

namespace ssmv::verify {

enum class Verdict : uint8_t {
  exact,            // EXACT: equals the exact value rounded to nearest even (same encoding)
  within_contract,  // WITHIN_CONTRACT: |computed − exact| ≤ bound
  violation,        // VIOLATION: |computed − exact| > bound (a bug), reported as a multiple of it
  invalid,          // INVALID: NaN/Inf where the exact value is finite, or the poison left unwritten
};

std::string_view verdict_name(Verdict v);  // "EXACT", "WITHIN_CONTRACT", ...

// Outputs are filled with this pattern before every run; finding it afterwards means the
// element was never written. A NaN payload no arithmetic produces (canonical NaNs are
// 0x7fc00000 / 0x7fc0 / 0x7e00).
inline Bits poison_bits(Format f) {
  switch (f) {
    case Format::fp32:
    case Format::int16_scaled: return 0x7fa5a5a5u;  // its elements are held as fp32 values
    case Format::bf16: return 0x7fa5u;
    case Format::fp16: return 0x7d5au;
  }
  return 0;
}

struct ElementJudgement {
  Verdict verdict = Verdict::exact;
  double error = 0;        // |computed − exact| (upper bound, see judge); +inf when invalid
  double bound_usage = 0;  // error / bound (0 when both are 0; +inf when bound is 0 < error;
                           // 0 for an EXACT ±Inf, the correct rounding of an exact value
                           // beyond the format's range)
  int64_t ulps = 0;        // ulp_distance(computed, exact rounded); kNanUlpDistance when NaN
  bool unwritten = false;  // the poison pattern was found
};

// `exact_rounded`: the exact value correctly rounded to f; `exact`: the exact value as the
// nearest double; `certified_error`: the reference's certified error. The error reported is
// an upper bound of |computed − true value|: the double difference plus certified_error plus
// the double rounding of `exact` (2^-53·|exact|), so no verdict rests on the reference's
// own rounding. Inline: the judges call it once per element.
inline ElementJudgement judge(Format f, Bits computed, Bits exact_rounded, double exact, double certified_error,
                              double bound) {
  ElementJudgement j;
  j.ulps = ulp_distance(f, computed, exact_rounded);
  const double v = decode(f, computed);
  if (computed == exact_rounded) {  // same encoding: +0 and −0 differ here
    j.verdict = Verdict::exact;
    j.error = std::fabs(v - exact);
    // A finite exact value beyond the format's range rounds to ±Inf: the kernel's ±Inf is then
    // the correctly rounded result, and its infinite distance to the exact value is no use of
    // the bound (usage 0, as for any result no kernel could improve), while the error stays ∞.
    j.bound_usage = !std::isfinite(v) ? 0 : bound > 0 ? j.error / bound : 0;
    return j;
  }
  j.unwritten = computed == poison_bits(f);
  if (j.unwritten || !std::isfinite(v)) {
    j.verdict = Verdict::invalid;
    j.error = std::numeric_limits<double>::infinity();
    j.bound_usage = std::numeric_limits<double>::infinity();
    return j;
  }
  // |v − exact| in double: v and exact are doubles, so the subtraction errs by at most half
  // an ULP of the difference; nudging up by 2^-52 relative makes it an upper bound.
  j.error = std::fabs(v - exact) * (1 + 0x1p-52) + certified_error + std::fabs(exact) * 0x1p-53;
  j.bound_usage = bound > 0 ? j.error / bound
                  : j.error > 0 ? std::numeric_limits<double>::infinity() : 0;
  j.verdict = j.error <= bound ? Verdict::within_contract : Verdict::violation;
  return j;
}

}  // namespace ssmv::verify
