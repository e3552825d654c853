// The magnitudes are upper bounds (reference/magnitude.h): checked against the
// recurrence on absolute values evaluated here independently in MPFR at 400 bits,
//   Sabs_t = a_t·Sabs_{t-1} + |δ_t·B_t|·|x_t|,  M_y = |zσ(z)|·(Σ_n |C_n|·Sabs_n + |D·x|),
// and tight: within a relative 2^-30 (the inflation is (1 + 2^-46) per token, T = 40).
#include <gtest/gtest.h>

#include <vector>

#include "reference/reference.h"
#include "reference/tests/reference_test_util.h"

namespace ssmv::ref {
namespace {

using testing::Mp;
using testing::random_problem;

// δ after bias, softplus and clamp, and a = exp(δ·A), at 400 bits (Mp's default).
void delta_and_decay(const Problem& pr, int64_t t, int64_t h, Mp& delta, Mp& decay) {
  mpfr_set_d(delta.get(), pr.dt[pr.dt_index(t, h)], MPFR_RNDN);
  if (pr.has_dt_bias()) mpfr_add_d(delta.get(), delta.get(), pr.dt_bias[h], MPFR_RNDN);
  if (pr.dt_softplus) {
    mpfr_exp(delta.get(), delta.get(), MPFR_RNDN);
    mpfr_log1p(delta.get(), delta.get(), MPFR_RNDN);
  }
  if (mpfr_cmp_d(delta.get(), pr.dt_limit_lo) < 0) mpfr_set_d(delta.get(), pr.dt_limit_lo, MPFR_RNDN);
  if (mpfr_cmp_d(delta.get(), pr.dt_limit_hi) > 0) mpfr_set_d(delta.get(), pr.dt_limit_hi, MPFR_RNDN);
  mpfr_mul_d(decay.get(), delta.get(), pr.A[h], MPFR_RNDN);
  mpfr_exp(decay.get(), decay.get(), MPFR_RNDN);
}

void expect_tight_upper_bound(double bound, mpfr_srcptr exact, const char* what, int64_t i) {
  EXPECT_LE(mpfr_cmp_d(exact, bound), 0) << what << " " << i << ": bound " << std::hexfloat << bound
                                         << " below exact " << mpfr_get_d(exact, MPFR_RNDN);
  Mp loose;
  mpfr_mul_d(loose.get(), exact, 1 + 0x1p-30, MPFR_RNDU);
  EXPECT_GE(mpfr_cmp_d(loose.get(), bound), 0) << what << " " << i << ": bound not tight";
}

TEST(ReferenceMagnitude, UpperBoundsOfTheAbsoluteRecurrence) {
  const int64_t T = 40, H = 2, P = 3, N = 4;
  Problem pr = random_problem({0, T}, H, P, N, 1, 61, true);
  pr.A[1] = 0.5f;  // a > 1 too: growth as well as decay
  const ExactResult r = compute(pr);

  std::vector<Mp> sabs(H * P * N);
  for (int64_t i = 0; i < H * P * N; ++i) mpfr_set_d(sabs[i].get(), std::fabs(pr.initial_state[i]), MPFR_RNDN);
  Mp delta, decay, term, sum;
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t h = 0; h < H; ++h) {
      delta_and_decay(pr, t, h, delta, decay);
      for (int64_t p = 0; p < P; ++p) {
        mpfr_set_zero(sum.get(), 1);
        for (int64_t n = 0; n < N; ++n) {
          Mp& s = sabs[(h * P + p) * N + n];
          mpfr_mul(s.get(), s.get(), decay.get(), MPFR_RNDN);
          mpfr_mul_d(term.get(), delta.get(), std::fabs(pr.B[pr.bc_index(t, 0, n)] * pr.x[pr.x_index(t, h, p)]),
                     MPFR_RNDN);  // |B·x| exact in float: 8 × 8 significant bits
          mpfr_add(s.get(), s.get(), term.get(), MPFR_RNDN);
          mpfr_mul_d(term.get(), s.get(), std::fabs(pr.C[pr.bc_index(t, 0, n)]), MPFR_RNDN);
          mpfr_add(sum.get(), sum.get(), term.get(), MPFR_RNDN);
        }
        const size_t i = pr.x_index(t, h, p);
        mpfr_add_d(sum.get(), sum.get(), std::fabs(double(pr.D[h]) * pr.x[i]), MPFR_RNDN);
        // gate |z / (1 + e^-z)|
        Mp g(-double(pr.z[i]));
        mpfr_exp(g.get(), g.get(), MPFR_RNDN);
        mpfr_add_ui(g.get(), g.get(), 1, MPFR_RNDN);
        mpfr_d_div(g.get(), std::fabs(double(pr.z[i])), g.get(), MPFR_RNDN);
        mpfr_mul(sum.get(), sum.get(), g.get(), MPFR_RNDN);
        expect_tight_upper_bound(r.y.magnitude[i], sum.get(), "y magnitude", int64_t(i));
      }
    }
  }
  for (int64_t i = 0; i < H * P * N; ++i)
    expect_tight_upper_bound(r.final_state.magnitude[i], sabs[i].get(), "state magnitude", i);
}

}  // namespace
}  // namespace ssmv::ref
