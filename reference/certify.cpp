#include "reference/certify.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "reference/reference.h"

namespace ssmv::ref {

Certifier::Certifier(int certified_bits, mpfr_prec_t primary_bits, mpfr_prec_t check_bits)
    : certified_bits_(certified_bits), primary_bits_(primary_bits), check_bits_(check_bits) {
  // The difference is rounded away from zero at check precision + 1 bits: an upper bound
  // of the exact |primary − check|, zero exactly when the two are equal.
  mpfr_init2(diff_, std::max(primary_bits, check_bits) + 1);
  mpfr_init2(allowance_, 64);  // holds magnitude · 2^-bits exactly (53-bit significand)
}

Certifier::~Certifier() {
  mpfr_clear(diff_);
  mpfr_clear(allowance_);
}

double Certifier::check(const char* tensor, const Coordinates& where, mpfr_srcptr primary,
                        mpfr_srcptr check, double magnitude) {
  if (!mpfr_number_p(primary) || !mpfr_number_p(check)) {
    mpfr_set_nan(diff_);
    mpfr_set_d(allowance_, magnitude, MPFR_RNDN);
    fail(tensor, where, primary, check, magnitude,
         "is not finite (MPFR's exponent range was exceeded); no value can be certified");
  }
  mpfr_sub(diff_, primary, check, MPFR_RNDA);
  mpfr_abs(diff_, diff_, MPFR_RNDN);
  // magnitude · 2^-bits, exact in MPFR's exponent range (no underflow, unlike double);
  // a magnitude of 0 demands exact agreement.
  mpfr_set_d(allowance_, magnitude, MPFR_RNDN);
  mpfr_mul_2si(allowance_, allowance_, -certified_bits_, MPFR_RNDN);
  if (!(magnitude >= 0) || mpfr_cmp(diff_, allowance_) > 0) {
    fail(tensor, where, primary, check, magnitude, "disagrees beyond the certified bits");
  }
  return mpfr_get_d(diff_, MPFR_RNDU);
}

void Certifier::fail(const char* tensor, const Coordinates& w, mpfr_srcptr primary,
                     mpfr_srcptr check, double magnitude, const char* why) {
  std::string at;
  auto field = [&](const char* name, int64_t v) {
    if (v < 0) return;
    if (!at.empty()) at += ", ";
    at += name;
    at += ' ';
    at += std::to_string(v);
  };
  field("sequence", w.sequence);
  field("token", w.token);
  field("position", w.position);
  field("head", w.head);
  field("dim", w.dim);
  field("p", w.state_p);
  field("n", w.state_n);
  double ratio = NAN;
  if (mpfr_number_p(primary) && mpfr_number_p(check)) {
    mpfr_t r;
    mpfr_init2(r, 53);
    mpfr_div(r, diff_, allowance_, MPFR_RNDN);
    ratio = mpfr_get_d(r, MPFR_RNDN);
    mpfr_clear(r);
  }
  const char* fmt =
      "certification failed: %s[%s] %s: primary run (%ld bits) = %Ra, check run (%ld bits) = "
      "%Ra; |difference| = %.3Re is %.3g times the allowance 2^-%d x magnitude %a; raise "
      "Options::precision_bits";
  const int len = mpfr_snprintf(nullptr, 0, fmt, tensor, at.c_str(), why, long(primary_bits_),
                                primary, long(check_bits_), check, diff_, ratio,
                                certified_bits_, magnitude);
  std::vector<char> buf(size_t(std::max(len, 0)) + 1);
  mpfr_snprintf(buf.data(), buf.size(), fmt, tensor, at.c_str(), why, long(primary_bits_), primary,
                long(check_bits_), check, diff_, ratio, certified_bits_, magnitude);
  throw CertificationError(buf.data());
}

}  // namespace ssmv::ref
