// Per-element verdicts: is a kernel's value the correctly rounded exact value, a
// rounding-path difference its contract allows, a bug, or not a valid value at all?
#pragma once

#include <cstdint>
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
Bits poison_bits(Format f);

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
// own rounding.
ElementJudgement judge(Format f, Bits computed, Bits exact_rounded, double exact,
                       double certified_error, double bound);

}  // namespace ssmv::verify
