#include "reference/mamba3/pair_state.h"

namespace ssmv::ref::mamba3 {
namespace {

void copy_into(std::vector<Num>& dst, const std::vector<Num>& src) {
  for (size_t i = 0; i < src.size(); ++i) mpfr_set(dst[i].get(), src[i].get(), MPFR_RNDN);  // same precision: exact
}

}  // namespace

PairState PairState::copy() const {
  const mpfr_prec_t bits = mpfr_get_prec(S[0].get());  // P, N >= 1
  PairState c(int64_t(x_prev.size()), int64_t(b_prev.size()), int64_t(angle.size()), bits);
  copy_into(c.angle, angle);
  copy_into(c.S, S);
  copy_into(c.b_prev, b_prev);
  copy_into(c.x_prev, x_prev);
  copy_into(c.angle_mag, angle_mag);
  copy_into(c.S_mag, S_mag);
  copy_into(c.b_prev_mag, b_prev_mag);
  return c;
}

CarriedState CarriedState::copy() const {
  CarriedState c{sequences, H, P, N, R, working_bits, check_bits, {}, {}};
  c.working.reserve(working.size());
  c.check.reserve(check.size());
  for (const PairState& p : working) c.working.push_back(p.copy());
  for (const PairState& p : check) c.check.push_back(p.copy());
  return c;
}

}  // namespace ssmv::ref::mamba3
