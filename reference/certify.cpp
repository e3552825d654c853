#include "reference/certify.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "reference/reference.h"

namespace ssmv::ref {

Certifier::Certifier(int certified_bits, mpfr_prec_t check_bits)
    : certified_bits_(certified_bits), check_bits_(check_bits) {
  mpfr_init2(allowance_, 64);  // holds magnitude · 2^-bits exactly (53-bit significand)
  mpfr_init2(bound_, 64);      // holds a double exactly
}

Certifier::~Certifier() {
  mpfr_clear(allowance_);
  mpfr_clear(bound_);
}

bool Certifier::holds(mpfr_srcptr value, double bound, double magnitude) {
  if (!mpfr_number_p(value) || !(magnitude >= 0) || !(bound >= 0)) return false;
  if (bound == 0) return true;
  // magnitude · 2^-bits is exact in double when it is normal; below that, compare in MPFR.
  const double allowance = std::ldexp(magnitude, -certified_bits_);
  if (allowance >= 0x1p-1022) return bound <= allowance;
  mpfr_set_d(allowance_, magnitude, MPFR_RNDN);
  mpfr_mul_2si(allowance_, allowance_, -certified_bits_, MPFR_RNDN);
  return mpfr_cmp_d(allowance_, bound) >= 0;
}

void Certifier::fail(const char* tensor, const Coordinates& w, mpfr_prec_t primary_bits, mpfr_srcptr primary,
                     mpfr_srcptr check, double bound, double magnitude, const char* why) {
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
  mpfr_set_d(allowance_, magnitude, MPFR_RNDN);
  mpfr_mul_2si(allowance_, allowance_, -certified_bits_, MPFR_RNDN);
  mpfr_set_d(bound_, bound, MPFR_RNDN);
  double ratio = NAN;
  if (mpfr_number_p(primary) && std::isfinite(bound)) {
    mpfr_t r;
    mpfr_init2(r, 53);
    mpfr_div(r, bound_, allowance_, MPFR_RNDN);
    ratio = mpfr_get_d(r, MPFR_RNDN);
    mpfr_clear(r);
  }
  const char* fmt =
      "certification failed: %s[%s] %s: primary run (%ld bits) = %Ra, check run (%ld bits) = %Ra; "
      "error bound %.3Re is %.3g times the allowance 2^-%d x magnitude %a; raise Options::precision_bits";
  const int len = mpfr_snprintf(nullptr, 0, fmt, tensor, at.c_str(), why, long(primary_bits), primary,
                                long(check_bits_), check, bound_, ratio, certified_bits_, magnitude);
  std::vector<char> buf(size_t(std::max(len, 0)) + 1);
  mpfr_snprintf(buf.data(), buf.size(), fmt, tensor, at.c_str(), why, long(primary_bits), primary,
                long(check_bits_), check, bound_, ratio, certified_bits_, magnitude);
  throw CertificationError(buf.data());
}

}  // namespace ssmv::ref
