// MagnitudeRecurrence::step (magnitude.h derives every constant): the state's magnitudes row
// by row over n, then the rows' sums Σ_n |C_n|·Ŝ_n and the outputs' magnitudes.
#include "reference/magnitude.h"

#include "reference/row_sums.h"
#include "spec/vector_clones.h"

namespace ssmv::ref {
namespace {

// One row: Ŝ_n = fl(fl(fl(a·Ŝ_n) + fl(w_n·|x|)) + 2η) where the step can be nonzero (Ŝ_n > 0,
// or w_n > 0 and |x| > 0), else the sum without 2η; returns whether some |C_n|·Ŝ_n > 0. The
// same operations on the same doubles for every n (a select on the bits for 2η, | for ||:
// the loop vectorises), compiled for AVX2 without FMA and generic x86-64.
SSMV_VECTOR_CLONES
bool advance_row(double* __restrict s, const double* __restrict w, const double* __restrict abs_c, double a,
                 double ax, int64_t N) {
  constexpr double kTwoEta = 2 * MagnitudeRecurrence::kEta;
  int64_t nonzero = 0;
  for (int64_t n = 0; n < N; ++n) {
    const bool live = (s[n] > 0) | ((w[n] > 0) & (ax > 0));
    s[n] = (a * s[n] + w[n] * ax) + pick(live, kTwoEta, 0.0);
    nonzero |= int64_t((abs_c[n] > 0) & (s[n] > 0));
  }
  return nonzero != 0;
}

}  // namespace

void MagnitudeRecurrence::step(const Problem& pr, int64_t t, int64_t h, double abs_delta_up, double decay_up,
                               const double* abs_gate_up) {
  const int64_t g = pr.shape.group_of(h);
  const double K = kCoefficientInflation;
  const double a = std::max(decay_up, kCoefficientFloor) * K;  // a = exp(δA) > 0 always
  for (int64_t n = 0; n < N_; ++n) {
    const double b = std::fabs(double(pr.B[pr.bc_index(t, g, n)]));
    w_[n] = (abs_delta_up > 0 && b > 0) ? std::max(abs_delta_up * b, kCoefficientFloor) * K : 0.0;
    abs_c_[n] = std::fabs(double(pr.C[pr.bc_index(t, g, n)]));
  }
  for (int64_t p = 0; p < P_; ++p) {
    const double ax = std::fabs(double(pr.x[pr.x_index(t, h, p)]));
    reads_state_[size_t(p)] = advance_row(&sabs_[p * N_], w_.data(), abs_c_.data(), a, ax, N_);
  }
  // Σ_n |C_n|·Ŝ_n of every row, in the order of n (N products and N additions from 0).
  weighted_row_sums(abs_c_.data(), sabs_.data(), P_, N_, sum_abs_c_sabs_.data());
  for (int64_t p = 0; p < P_; ++p) {
    const double sum = sum_abs_c_sabs_[p];
    abs_dx_[p] = std::fabs(double(pr.d_value(h, p)) * double(pr.x[pr.x_index(t, h, p)]));  // exact: 24 × 24 bits
    const bool any = reads_state_[size_t(p)] != 0 || abs_dx_[p] > 0;
    const double slack = any ? output_slack_ : 0.0;
    ungated_[p] = (sum + abs_dx_[p]) * output_inflation_ + slack;
    if (abs_gate_up) {
      y_[p] = abs_gate_up[p] > 0 ? ((sum + abs_dx_[p]) * abs_gate_up[p]) * output_inflation_ + slack : 0.0;
    } else {
      y_[p] = ungated_[p];
    }
  }
}

}  // namespace ssmv::ref
