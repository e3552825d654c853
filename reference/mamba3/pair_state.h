// What the Mamba-3 reference carries from one token to the next for one (sequence, head)
// pair at one precision: the four parts of the decode state (docs/mamba3-semantics.md §4),
// unrounded, and the magnitudes the certificate compares against. CarriedState holds them
// for every pair and both runs of a certified call, so that decode() continues exactly
// where compute() stopped: the same MPFR operations on the same variables, bit for bit.
#pragma once

#include <mpfr.h>

#include <cstdint>
#include <vector>

#include "reference/arithmetic.h"

namespace ssmv::ref::mamba3 {

using Num = RawMpfr::Num;

// Precision of the magnitudes (bits), rounded upward. They are the yardstick of a 2^-64
// agreement test, so a few correct bits would do; 53 keeps them exactly convertible to
// double while MPFR's exponent range keeps long decays (α^T far below 2^-1074) nonzero.
inline constexpr mpfr_prec_t kMagnitudeBits = 53;

// n MPFR variables of `bits` precision, each +0. (A vector constructed at its size: Num
// is neither copied nor moved; moving the vector moves no element.)
inline std::vector<Num> mpfr_zeros(size_t n, mpfr_prec_t bits) {
  std::vector<Num> v(n);
  for (Num& x : v) x.init(bits);
  return v;
}

struct PairState {
  // Values at the run's precision.
  std::vector<Num> angle;   // [R]   θ, not reduced (cos and sin do not care; decode()
                            //       continues from it); reduced only when returned
  std::vector<Num> S;       // [P*N] the state S[p, n]
  std::vector<Num> b_prev;  // [N]   the last token's b: B + B_bias, rotated
  std::vector<Num> x_prev;  // [P]   the last token's x
  // Magnitudes at kMagnitudeBits, rounded up: the recurrences on absolute values
  // (x_prev's magnitude is |x_prev|).
  std::vector<Num> angle_mag;   // [R]   |θ0| + Σ|π·tanh(angle)·dt|
  std::vector<Num> S_mag;       // [P*N] α·S_mag + |β·x_prev|·b_prev_mag + |γ·x|·b_mag
  std::vector<Num> b_prev_mag;  // [N]   |u0|·|cos| + |u1|·|sin| with |u| = |B| + |B_bias|

  PairState(int64_t P, int64_t N, int64_t R, mpfr_prec_t bits)
      : angle(mpfr_zeros(size_t(R), bits)),
        S(mpfr_zeros(size_t(P * N), bits)),
        b_prev(mpfr_zeros(size_t(N), bits)),
        x_prev(mpfr_zeros(size_t(P), bits)),
        angle_mag(mpfr_zeros(size_t(R), kMagnitudeBits)),
        S_mag(mpfr_zeros(size_t(P * N), kMagnitudeBits)),
        b_prev_mag(mpfr_zeros(size_t(N), kMagnitudeBits)) {}

  // A deep copy (same precisions, same bits).
  PairState copy() const;
};

// Every pair's state after a certified call: pair index s*H + h.
struct CarriedState {
  int64_t sequences = 0, H = 0, P = 0, N = 0, R = 0;
  mpfr_prec_t working_bits = 0, check_bits = 0;
  std::vector<PairState> working, check;  // the two runs of the certificate

  CarriedState copy() const;
};

}  // namespace ssmv::ref::mamba3
