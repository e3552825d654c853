#include "verify/judge/verdict.h"

#include <cmath>
#include <limits>

namespace ssmv::verify {

std::string_view verdict_name(Verdict v) {
  switch (v) {
    case Verdict::exact: return "EXACT";
    case Verdict::within_contract: return "WITHIN_CONTRACT";
    case Verdict::violation: return "VIOLATION";
    case Verdict::invalid: return "INVALID";
  }
  return "?";
}

Bits poison_bits(Format f) {
  switch (f) {
    case Format::fp32:
    case Format::int16_scaled: return 0x7fa5a5a5u;  // its elements are held as fp32 values
    case Format::bf16: return 0x7fa5u;
    case Format::fp16: return 0x7d5au;
  }
  return 0;
}

ElementJudgement judge(Format f, Bits computed, Bits exact_rounded, double exact,
                       double certified_error, double bound) {
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
