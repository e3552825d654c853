// MagnitudeRecurrence::step (magnitude.h derives every constant): the state's magnitudes row
// by row over n, then the rows' sums Σ_n |C_n|·Ŝ_n and the outputs' magnitudes.
#include "reference/magnitude.h"

#include "reference/row_sums.h"
#include "spec/vector_clones.h"

namespace ssmv::ref {
namespace {

// One row: every Ŝ_n advanced by MagnitudeRecurrence::advance; returns whether some
// |C_n|·Ŝ_n > 0. Compiled for AVX-512, AVX2 (no FMA is contracted: -ffp-contract=off) and
// generic x86-64.
SSMV_VECTOR_CLONES
bool advance_row(double* __restrict s, const double* __restrict w, const double* __restrict abs_c, double a,
                 double ax, int64_t N) {
  int64_t nonzero = 0;
  for (int64_t n = 0; n < N; ++n) {
    s[n] = MagnitudeRecurrence::advance(s[n], w[n], a, ax);
    nonzero |= int64_t((abs_c[n] > 0) & (s[n] > 0));
  }
  return nonzero != 0;
}

}  // namespace

void MagnitudeRecurrence::begin_step(const Problem& pr, int64_t t, int64_t h, double abs_delta_up, double decay_up) {
  const int64_t g = pr.shape.group_of(h);
  const double K = kCoefficientInflation;
  a_ = std::max(decay_up, kCoefficientFloor) * K;  // a = exp(δA) > 0 always
  const float* B = pr.B.read(size_t(pr.bc_index(t, g, 0)), size_t(N_), row_b_);
  const float* C = pr.C.read(size_t(pr.bc_index(t, g, 0)), size_t(N_), row_c_);
  for (int64_t n = 0; n < N_; ++n) {
    const double b = std::fabs(double(B[n]));
    w_[n] = (abs_delta_up > 0 && b > 0) ? std::max(abs_delta_up * b, kCoefficientFloor) * K : 0.0;
    abs_c_[n] = std::fabs(double(C[n]));
  }
}

void MagnitudeRecurrence::finish_row(const Problem& pr, int64_t t, int64_t h, int64_t p, double sum,
                                     bool reads_state, const double* abs_gate_up) {
  sum_abs_c_sabs_[p] = sum;
  reads_state_[size_t(p)] = reads_state;
  abs_dx_[p] = std::fabs(double(pr.d_value(h, p)) * double(pr.x[pr.x_index(t, h, p)]));  // exact: 24 × 24 bits
  const bool any = reads_state || abs_dx_[p] > 0;
  const double slack = any ? output_slack_ : 0.0;
  ungated_[p] = (sum + abs_dx_[p]) * output_inflation_ + slack;
  if (abs_gate_up) {
    y_[p] = abs_gate_up[p] > 0 ? ((sum + abs_dx_[p]) * abs_gate_up[p]) * output_inflation_ + slack : 0.0;
  } else {
    y_[p] = ungated_[p];
  }
}

void MagnitudeRecurrence::step(const Problem& pr, int64_t t, int64_t h, double abs_delta_up, double decay_up,
                               const double* abs_gate_up) {
  begin_step(pr, t, h, abs_delta_up, decay_up);
  for (int64_t p = 0; p < P_; ++p) {
    const double ax = std::fabs(double(pr.x[pr.x_index(t, h, p)]));
    reads_state_[size_t(p)] = advance_row(&sabs_[p * N_], w_.data(), abs_c_.data(), a_, ax, N_);
  }
  // Σ_n |C_n|·Ŝ_n of every row, in the order of n (N products and N additions from 0).
  weighted_row_sums(abs_c_.data(), sabs_.data(), P_, N_, sum_abs_c_sabs_.data());
  for (int64_t p = 0; p < P_; ++p) {
    finish_row(pr, t, h, p, sum_abs_c_sabs_[p], reads_state_[size_t(p)] != 0, abs_gate_up);
  }
}

}  // namespace ssmv::ref
