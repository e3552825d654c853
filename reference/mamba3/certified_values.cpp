#include "reference/mamba3/certified_values.h"

#include <cstdio>
#include <string>

#include "reference/reference.h"  // CertificationError
#include "reference/round.h"

namespace ssmv::ref::mamba3 {

void CertifiedValues::resize(size_t n) {
  for (std::vector<double>* v : {&hi, &lo, &magnitude}) v->assign(n, 0.0);
  for (std::vector<Bits>* v : {&fp32, &bf16, &fp16}) v->assign(n, 0);
}

Bits CertifiedValues::rounded(Format f, size_t i) const {
  switch (f) {
    case Format::bf16:
      return bf16[i];
    case Format::fp16:
      return fp16[i];
    case Format::fp32:
    case Format::int16_scaled:
      break;
  }
  return fp32[i];
}

AgreementCheck::AgreementCheck(int certified_bits, mpfr_prec_t check_bits) : certified_bits_(certified_bits) {
  difference_.init(check_bits);
  allowance_.init(check_bits);
}

void AgreementCheck::accept(CertifiedValues& out, size_t i, mpfr_srcptr working, mpfr_srcptr check,
                            mpfr_srcptr magnitude, const char* tensor) {
  if (!mpfr_number_p(working) || !mpfr_number_p(check) || !mpfr_number_p(magnitude)) {
    fail(tensor, i, working, check, magnitude, "is not finite in MPFR's exponent range");
  }
  mpfr_sub(difference_.get(), working, check, MPFR_RNDA);
  mpfr_mul_2si(allowance_.get(), magnitude, -certified_bits_, MPFR_RNDZ);
  if (mpfr_cmpabs(difference_.get(), allowance_.get()) > 0) {
    fail(tensor, i, working, check, magnitude,
         "differs between the runs by more than 2^-certified_bits of its magnitude");
  }
  constexpr Format kFormats[3] = {Format::fp32, Format::bf16, Format::fp16};
  std::vector<Bits>* const slots[3] = {&out.fp32, &out.bf16, &out.fp16};
  for (int k = 0; k < 3; ++k) {
    const Bits b = round_nearest_even(kFormats[k], check);
    if (b != round_nearest_even(kFormats[k], working)) {
      fail(tensor, i, working, check, magnitude,
           "rounds differently in the two runs: its correct rounding is not decided");
    }
    (*slots[k])[i] = b;
  }
  out.hi[i] = mpfr_get_d(check, MPFR_RNDN);
  mpfr_sub_d(difference_.get(), check, out.hi[i], MPFR_RNDN);
  out.lo[i] = mpfr_get_d(difference_.get(), MPFR_RNDN);
  out.magnitude[i] = mpfr_get_d(magnitude, MPFR_RNDU);
}

void AgreementCheck::fail(const char* tensor, size_t i, mpfr_srcptr working, mpfr_srcptr check, mpfr_srcptr magnitude,
                          const char* why) const {
  char* text = nullptr;
  const int n = mpfr_asprintf(&text,
                              "%s[%zu] %s: working run (%ld bits) %Ra, check run (%ld bits) %Ra, magnitude %Ra, "
                              "allowance 2^-%d of it",
                              tensor, i, why, long(mpfr_get_prec(working)), working, long(mpfr_get_prec(check)), check,
                              magnitude, certified_bits_);
  std::string message = n >= 0 ? std::string("mamba3 reference: ") + text : std::string("mamba3 reference: ") + tensor;
  if (text) mpfr_free_str(text);
  throw CertificationError(message);
}

}  // namespace ssmv::ref::mamba3
