// Internal: the gates z·σ(z) of the check run (TokenScalars::gate_of, the same MPFR
// operations at the check precision), memoised per z value: a bf16 or fp16 z takes at most
// 2^16 values, so a worker computes each once. Both tiers read their gates' magnitudes
// (|gate| rounded away from zero) from here, so their magnitudes are bit for bit equal; the
// fast tier also reads the gate as a double-double.
#pragma once

#include <mpfr.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <unordered_map>

#include "reference/arithmetic.h"
#include "reference/double_double.h"
#include "reference/head_recurrence.h"

namespace ssmv::ref::detail {

// v as hi + lo: hi = RN(v), lo = RN(v − hi) (v − hi is exact at v's precision, computed in
// `scratch`, which must have v's precision or more). |v − (hi + lo)| <= 2^-53·|lo|, plus
// 2^-1075 if lo underflows (docs/reference-tiers.md [1]).
inline dd::DD dd_of(mpfr_srcptr v, mpfr_ptr scratch) {
  const double hi = mpfr_get_d(v, MPFR_RNDN);
  mpfr_sub_d(scratch, v, hi, MPFR_RNDN);
  return {hi, mpfr_get_d(scratch, MPFR_RNDN)};
}

class GateMemo {
 public:
  struct Gate {
    dd::DD value;   // the check run's gate as a double-double
    double abs_up;  // |gate| rounded away from zero to double
  };

  explicit GateMemo(mpfr_prec_t check_bits) : scalars_(check_bits, 0) {
    gate_.init(check_bits);
    mpfr_init2(scratch_, check_bits);
  }
  ~GateMemo() { mpfr_clear(scratch_); }
  GateMemo(const GateMemo&) = delete;
  GateMemo& operator=(const GateMemo&) = delete;

  const Gate& of(float z) {
    uint32_t key;
    std::memcpy(&key, &z, sizeof key);
    auto it = gates_.find(key);
    if (it != gates_.end()) return it->second;
    if (gates_.size() >= kMaxCached) gates_.clear();
    scalars_.gate_of(z, gate_);
    const Gate g{dd_of(gate_.get(), scratch_), std::fabs(mpfr_get_d(gate_.get(), MPFR_RNDA))};
    return gates_.emplace(key, g).first->second;
  }

 private:
  static constexpr size_t kMaxCached = size_t(1) << 18;
  TokenScalars<RawMpfr> scalars_;
  RawMpfr::Num gate_;
  mpfr_t scratch_;
  std::unordered_map<uint32_t, Gate> gates_;
};

}  // namespace ssmv::ref::detail
