// Internal: the a-priori error bound of one MPFR run of the reference core
// (HeadRecurrence, head_recurrence.h) at `bits` of precision, u = 2^-bits: every
// operation is one MPFR rounding to nearest (relative error <= u, MPFR's correct
// rounding), no underflow (checked by the caller through MPFR's underflow flag).
// Derivation: docs/reference-tiers.md, "The MPFR tier's certificate" [6]. The MPFR tier
// (driver.cpp) certifies its values with it; the fast tier (tiered.cpp) uses it for the
// check run's error when it decides the check run's roundings.
//
// All bounds are computed in double from non-negative terms: a result of at most 2^12
// rounded operations is multiplied by kUp = 1 + 2^-40, which makes it an upper bound
// ((1-2^-53)^4096·kUp > 1); the Γ recurrence (three operations per token) by
// kUp8 = 1 + 8·2^-53 ((1-2^-53)^4·kUp8 > 1).
#pragma once

#include <cmath>
#include <cstdint>

namespace ssmv::ref::detail {

class MpfrRunBound {
 public:
  static constexpr double kUp = 1 + 0x1p-40;
  static constexpr double kUp8 = 1 + 8 * 0x1p-53;
  // The decay's argument error must stay below this for exp's error bound [6].
  static constexpr double kMaxArgumentError = 0x1p-20;

  // A bound on (1+e_1)···(1+e_k) − 1 for relative errors with |e_1| + ... + |e_k| <= s <= 1:
  // that product is at most e^s, and e^s − 1 <= s·(1 + s).
  static double compose(double s) { return s * (1 + s) * kUp; }

  MpfrRunBound(int bits, int64_t N)
      : u_(std::ldexp(1.0, -bits)), rho_delta_(4.01 * u_), rho_gate_(3.01 * u_),
        kappa_(compose(double(N + 2) * u_)) {}

  // Γ_0: the relative error of the initial state against its magnitude.
  void start(double gamma0) { gamma_ = gamma0; }

  // One token with |δ| <= abs_delta_up (the run's δ rounded away from zero) and A of the
  // head: the decay's relative error and Γ_t. A decay argument error above 2^-20 makes
  // every later bound infinite (no value is certified from there).
  void step(double abs_delta_up, double A) {
    // |δ̃·Ã − δA| <= |δA|·compose(ρ_δ + u): δ's error, then the product's rounding.
    const double dA = abs_delta_up * (1 + compose(rho_delta_)) * std::fabs(A) * kUp;
    const double arg_err = dA * compose(rho_delta_ + u_);
    rho_decay_ = arg_err <= kMaxArgumentError ? 1.01 * arg_err + 1.01 * u_ : INFINITY;
    // One state update S = a·S + (δ·B)·x: the a·S term carries ρ_a and two roundings (the
    // product, the sum), the input term ρ_δ and three (δ·B, ·x, the sum).
    const double theta = compose(std::fmax(rho_decay_ + 2 * u_, rho_delta_ + 3 * u_));
    gamma_ = (gamma_ + theta + gamma_ * theta) * kUp8;
  }

  double u() const { return u_; }
  double rho_delta() const { return rho_delta_; }  // δ: at most four roundings, each propagated with factor <= 1
  double rho_decay() const { return rho_decay_; }  // exp(δ·A) after the last step()
  double rho_gate() const { return rho_gate_; }    // z / (1 + e^-z): three roundings
  double gamma() const { return gamma_; }          // |S̃ − S| <= Γ·Sabs

  // |S̃ − S| for a state element of magnitude sabs (>= Sabs).
  double state(double sabs) const { return gamma_ * sabs * kUp; }
  // |ỹ_u − y_u| for y_ungated of magnitude Mu (>= Σ|C_n|·Sabs_n + |D·x|): the state's
  // error through C (none when every C_n·Sabs_n is 0: `reads_state` false), and N + 2
  // roundings (the product, at most N + 1 additions) per term (none when every one of those
  // operations was exact: `output_inexact` false).
  double y_ungated(double Mu, bool reads_state = true, bool output_inexact = true) const {
    const double through_state = reads_state ? gamma_ * Mu : 0.0;
    const double roundings = output_inexact ? kappa_ * Mu * (1 + gamma_) : 0.0;
    return (through_state + roundings) * kUp;
  }
  // |ỹ − y| for y = y_ungated·g: e_yu = y_ungated(Mu), |g| <= abs_gate (a bound of the
  // exact gate), the run's gate with ρ_g and the product's rounding.
  double y(double e_yu, double Mu, double abs_gate) const {
    const double r = compose(rho_gate_ + u_);
    return abs_gate * (e_yu * (1 + r) + Mu * r) * kUp;
  }
  // A bound of |g| from |g̃| rounded up, g̃ a gate of this run's precision.
  double gate_bound(double abs_gate_up) const { return abs_gate_up * (1 + 2 * compose(rho_gate_)) * kUp; }

 private:
  double u_, rho_delta_, rho_gate_, kappa_;
  double rho_decay_ = 0, gamma_ = 0;
};

}  // namespace ssmv::ref::detail
