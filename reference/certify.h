// The certificate of the reference's MPFR tier (docs/reference-tiers.md, "The MPFR tier's
// certificate"): a value computed at the working precision is accepted when its a-priori
// error bound is at most 2^-certified_bits · magnitude (0 when the magnitude is 0);
// otherwise CertificationError names the tensor, the element, the working run's value, the
// same value at the check precision (for comparison, hex %Ra), the bound and its ratio to
// the allowance.
#pragma once

#include <mpfr.h>

#include <cstdint>
#include <string>

namespace ssmv::ref {

// Where a value sits, for the error message. Fields that do not apply are -1.
struct Coordinates {
  int64_t sequence = -1, token = -1, head = -1, dim = -1;  // dim: p of y
  int64_t state_p = -1, state_n = -1;                         // state element (p, n)
  int64_t position = -1;                                      // state position q
};

class Certifier {
 public:
  Certifier(int certified_bits, mpfr_prec_t check_bits);
  ~Certifier();
  Certifier(const Certifier&) = delete;
  Certifier& operator=(const Certifier&) = delete;

  // Whether `value` is finite and bound <= 2^-certified_bits · magnitude (exactly, in
  // MPFR's exponent range: no underflow of the allowance).
  bool holds(mpfr_srcptr value, double bound, double magnitude);

  // Throws CertificationError: `primary`, the value of the run at `primary_bits` whose
  // bound failed, with `bound`, beside `check`, the same value at the check precision;
  // `why` says what failed.
  [[noreturn]] void fail(const char* tensor, const Coordinates& where, mpfr_prec_t primary_bits, mpfr_srcptr primary,
                         mpfr_srcptr check, double bound, double magnitude, const char* why);

 private:
  int certified_bits_;
  mpfr_prec_t check_bits_;
  mpfr_t allowance_, bound_;
};

// The reasons fail() is given.
inline constexpr const char* kBoundTooLarge = "has an a-priori error bound beyond the certified bits";
inline constexpr const char* kNotFinite =
    "is not finite (MPFR's exponent range was exceeded); no value can be certified";
inline constexpr const char* kUnderflow =
    "underflowed MPFR's exponent range (below 2^-1073741824), where no relative error bound holds; "
    "no value can be certified";

}  // namespace ssmv::ref
