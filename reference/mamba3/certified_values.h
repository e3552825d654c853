// Values of the Mamba-3 reference certified by precision-doubling agreement
// (docs/mamba3-semantics.md §6): the whole recurrence runs twice, at the working precision p
// and at the check precision p + 64 (by default), and a value is accepted only when
//   |v_p − v_check| <= 2^-certified_bits · magnitude
// (the magnitude: the recurrence on absolute values) and both runs round alike to fp32,
// bf16 and fp16. The check run's value is returned. Agreement is evidence, not a proof:
// it holds unless both runs err alike by more than the allowance, which rounding errors
// 2^64 times smaller in the check run make implausible; an a-priori bound (as
// reference/mpfr_bound.h gives Mamba2) is not yet written for Mamba-3.
#pragma once

#include <mpfr.h>

#include <cstdint>
#include <vector>

#include "reference/arithmetic.h"
#include "spec/format.h"

namespace ssmv::ref::mamba3 {

struct CertifiedValues {
  // The check run's value as a double-double: hi = RN(v), lo = RN(v − hi).
  std::vector<double> hi, lo;
  std::vector<double> magnitude;       // the absolute recurrence, rounded up to double
  std::vector<Bits> fp32, bf16, fp16;  // v correctly rounded to nearest, ties to even

  size_t size() const { return hi.size(); }
  void resize(size_t n);
  // The rounding to f (fp32, bf16 or fp16; int16_scaled elements are fp32 values).
  Bits rounded(Format f, size_t i) const;
};

class AgreementCheck {
 public:
  AgreementCheck(int certified_bits, mpfr_prec_t check_bits);

  // Stores `check` into out[i] when `working` agrees with it (see the top of this file),
  // else throws ssmv::ref::CertificationError naming tensor[index] with both values (%Ra).
  void accept(CertifiedValues& out, size_t i, mpfr_srcptr working, mpfr_srcptr check, mpfr_srcptr magnitude,
              const char* tensor);

 private:
  [[noreturn]] void fail(const char* tensor, size_t i, mpfr_srcptr working, mpfr_srcptr check, mpfr_srcptr magnitude,
                         const char* why) const;

  int certified_bits_;
  RawMpfr::Num difference_, allowance_;
};

}  // namespace ssmv::ref::mamba3
