// The certification test of the reference: a value computed at two precisions is
// accepted when |primary − check| <= 2^-certified_bits · magnitude (exactly equal when
// the magnitude is 0);
// otherwise CertificationError names the tensor, the element, both values (hex, %Ra)
// and the ratio of the difference to the allowance.
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
  Certifier(int certified_bits, mpfr_prec_t primary_bits, mpfr_prec_t check_bits);
  ~Certifier();
  Certifier(const Certifier&) = delete;
  Certifier& operator=(const Certifier&) = delete;

  // Returns |primary − check| rounded up to double, or throws CertificationError. A value
  // that is NaN or infinite in either run (MPFR's exponent range exceeded) is refused.
  double check(const char* tensor, const Coordinates& where, mpfr_srcptr primary,
               mpfr_srcptr check, double magnitude);

 private:
  [[noreturn]] void fail(const char* tensor, const Coordinates& where, mpfr_srcptr primary,
                         mpfr_srcptr check, double magnitude, const char* why);
  int certified_bits_;
  mpfr_prec_t primary_bits_, check_bits_;
  mpfr_t diff_, allowance_;
};

}  // namespace ssmv::ref
