// The pieces both Mamba-3 bounds (step_bound.cpp, prefill_bound.cpp) are written with: the
// margins of the bound's own double arithmetic (docs/mamba3-bounds.md §9), the fp32 constants'
// errors, a budget over an interval of arguments, the rounding to a storage format.
#pragma once

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "spec/contract.h"
#include "spec/format.h"
#include "verify/bound/error_model.h"
#include "spec/mamba3/contract.h"  // kPiF32, kTwoPiF32

namespace ssmv::bound::mamba3::terms {

inline constexpr double kPi = 3.141592653589793;  // RN_double(π), within 2^-52 of π
// [9] Relative margin of a magnitude evaluated in double (a few operations and one libm double
// function of at most a few ULPs each: below 2^-48 relative), rounded up generously.
inline constexpr double kExactMargin = 0x1p-40;
// [9] Per token (step) or chunk (prefill), every bound quantity is a sum of products of
// non-negative doubles with fewer than 2^20 operations on any path since the previous one's
// (the bounds check the sizes that keep it so): rounding to nearest leaves it at least
// (1 − 2^-53)^(2^20) > 1 − 2^-32.9 of the exactly evaluated formula, so multiplying by 1 + 2^-32
// each time keeps every carried error an upper bound by induction (the formulas are monotone in
// the carried errors).
inline constexpr double kStepSafety = 1 + 0x1p-32;

// fp32: unit roundoff, half the subnormal spacing (the error of a product that underflows).
inline constexpr double kU = 0x1p-24, kEta = 0x1p-150;

inline double up(double v) { return std::fabs(v) * (1 + kExactMargin); }

// |π_f − π| and |2π_f − 2π| (π_f exact in double; RN_double(π) within 2^-52 of π).
inline const double kPiErr = std::fabs(double(ssmv::mamba3::kPiF32) - kPi) + 0x1p-51;
inline const double kTwoPiErr = 2 * kPiErr;
inline const double kTwoPiF = double(ssmv::mamba3::kTwoPiF32);

// The budget of `b` for an argument known to lie in [lo, hi] and an exact result of magnitude at
// most value_mag (verify/bound/error_model.h transcendental_error, for an interval of arguments).
// Throws std::invalid_argument when the interval leaves the budget's range.
inline double budget_over(const TranscendentalBudget& b, double lo, double hi, double value_mag) {
  if (lo < b.arg_lo || hi > b.arg_hi) {
    throw std::invalid_argument("transcendental '" + b.function + "' evaluated on [" + std::to_string(lo) + ", " +
                                std::to_string(hi) + "], outside its budget's range [" + std::to_string(b.arg_lo) +
                                ", " + std::to_string(b.arg_hi) + "]");
  }
  const double ulps = b.ulp_const + b.ulp_per_abs_arg * std::max(std::fabs(lo), std::fabs(hi));
  return ulps * ulp_of(Format::fp32, value_mag) + b.abs_error;
}

inline double budget_at(const TranscendentalBudget& b, double arg, double value_mag) {
  return budget_over(b, arg, arg, value_mag);
}

// The error of storing an fp32 value of magnitude at most `magnitude` in `f` (none in fp32).
inline double round_to(Format f, double magnitude) {
  return f == Format::fp32 ? 0.0 : half_ulp_at_most(f, magnitude);
}

inline void check_size(const char* who, const std::vector<double>& v, int64_t n, const char* what) {
  if (int64_t(v.size()) != n) {
    throw std::invalid_argument(std::string(who) + ": ExactTrace::" + what + " has " + std::to_string(v.size()) +
                                " elements, the problem needs " + std::to_string(n));
  }
}

// [3], [II.2] λ̂ = σ(trap), ô = fl(1 − λ̂): exact values (upper bounds) and errors.
struct Gate {
  double lam = 0, d_lam = 0, om = 0, d_om = 0;
};
inline Gate gate(const TranscendentalBudget& sigmoid, double trap) {
  Gate g;
  g.lam = up(1 / (1 + std::exp(-trap)));
  g.om = up(1 / (1 + std::exp(trap)));
  g.d_lam = budget_at(sigmoid, trap, std::min(1.0, g.lam));
  g.d_om = g.d_lam + kU * (g.om + g.d_lam);
  return g;
}

// [4.1] The angle's increment v̂ = fl(fl(t̂·π_f)·dt), t̂ = tanh(a) within its budget, against the
// exact π·tanh(a)·dt: an upper bound of |π_f·tanh(a)·dt| and the error.
struct Increment {
  double value = 0, error = 0;
};
inline Increment angle_increment(const TranscendentalBudget& tanh, double a, double dt) {
  const double tn = up(std::tanh(a));
  const double d_t = budget_at(tanh, a, std::min(1.0, tn));
  const double pi_f = double(ssmv::mamba3::kPiF32);
  const double m1 = pi_f * tn, d_m1 = pi_f * d_t + tn * kPiErr + kU * pi_f * (tn + d_t) + kEta;
  return {m1 * dt, dt * d_m1 + kU * dt * (m1 + d_m1) + kEta};
}

// [4.3], [II.1] The reduction θ̂ = fl(o − 2π_f·floor(fl(o/2π_f))) of an fp32 o with |o| <= mag and
// circular error E (step bound [4.3], the general case): the reduced angle's circular error, an
// upper bound of |θ̂|, and how far θ̂ may lie outside [0, 2π_f].
struct Reduced {
  double error = 0, magnitude = 0, over = 0;
};
inline Reduced reduce(double E, double mag, double div) {
  const double kmax = std::floor(mag * (1 + div) / kTwoPiF) + 1;
  const double prod = kmax <= 1 ? 0.0 : kU * kTwoPiF * kmax;
  const double r_pre = kTwoPiF + div * mag + prod;
  return {E + kmax * kTwoPiErr + prod + kU * r_pre, r_pre * (1 + kU), div * mag + prod + kU * r_pre + kTwoPiErr};
}

// [7.5] y's error after the gate fl(ŷ·ĝ), ĝ = z·σ(z) within the silu budget: `e` the error
// before it, `y_mag` an upper bound of the exact ungated |y|.
inline double gated_error(double e, double y_mag, double z, const TranscendentalBudget& silu) {
  const double gz = up(z / (1 + std::exp(-z)));
  const double d_g = budget_at(silu, z, gz);
  return gz * e + y_mag * d_g + e * d_g + kU * (y_mag + e) * (gz + d_g) + kEta;
}

// [4.4], [5] What the turn of one pair (2r, 2r+1) reads of its angle: whether it is turned (r < R),
// the exact θ (phi, within phi_err mod 2π), the kernel's cos/sin errors and the chord
// min(E, 2) of its angle error E on the circle, and chat/shat, upper bounds of the computed
// |cos|, |sin|.
struct PairAngle {
  bool turned = false;
  double phi = 0, phi_err = 0;
  double chord = 0, dcos = 0, dsin = 0, chat = 1, shat = 0;
};

// [5] The turn of (u0, u1) = V + bias (exact, in double; the kernel's fl(V + bias) errs by u|u_i|)
// by the computed angle in fp32: upper bounds of the exact turned |b_2r|, |b_2r+1| (`mag`) and of
// the kernel's error in each (`err`).
inline void turn_pair(double u0, double u1, const PairAngle& a, double mag[2], double err[2]) {
  const double a0 = up(u0), a1 = up(u1);
  const double du0 = kU * a0, du1 = kU * a1;  // fl(V + bias)
  const double norm = std::sqrt(a0 * a0 + a1 * a1) * (1 + kExactMargin);
  if (a.turned) {
    const double cp = std::cos(a.phi), sp = std::sin(a.phi);
    mag[0] = std::fabs(u0 * cp - u1 * sp) + (a0 + a1) * (a.phi_err + 0x1p-48);
    mag[1] = std::fabs(u0 * sp + u1 * cp) + (a0 + a1) * (a.phi_err + 0x1p-48);
  } else {
    mag[0] = a0;
    mag[1] = a1;
  }
  const double g2 = gamma(2, kU), ang = norm * a.chord;
  err[0] = ang + a0 * a.dcos + a1 * a.dsin + du0 * a.chat + du1 * a.shat +
           g2 * ((a0 + du0) * a.chat + (a1 + du1) * a.shat) + 2 * kEta;
  err[1] = ang + a0 * a.dsin + a1 * a.dcos + du0 * a.shat + du1 * a.chat +
           g2 * ((a0 + du0) * a.shat + (a1 + du1) * a.chat) + 2 * kEta;
}

}  // namespace ssmv::bound::mamba3::terms
