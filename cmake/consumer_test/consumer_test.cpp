// The one test of the package consumer (cmake/consumer_test): a decode kernel of its own —
// fp32 arithmetic, launched once per token, the state stored in fp32 after every token —
// judged against ssmv's certified reference under the "ssu" preset contract.
//
// The kernel performs the preset's rounding points (fast/ssu/contract.cpp): δ = fl(dt +
// dt_bias), softplus, a = exp(fl(δ·A)), S = fma(fl(δ·B), x, fl(a·S)); y = Σ_n C·S as 16
// interleaved partial sums of fmaf then a pairwise tree (the preset's partials = 16), then
// fma(D, x, y) and the gate y·fl(z·σ(z)). Its transcendentals are evaluated in double
// and rounded once (≤ 0.5 ULP + ε, inside the preset's 1, 1.6 and 2.5 ULP budgets).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "spec/realistic_problem.h"
#include "verify/contracts/contract_json.h"
#include "verify/judge/external_check.h"
#include "verify/reports/gtest_contract.h"

namespace {

using ssmv::Problem;

float exp_f(float v) { return float(std::exp(double(v))); }
float softplus_f(float v) { return v > 20.0f ? v : float(std::log1p(std::exp(double(v)))); }
float sigmoid_f(float v) { return float(1.0 / (1.0 + std::exp(-double(v)))); }

// One launch: token t of every head, from the fp32 states `state` [H, P, N] of its sequence,
// which it updates in place (the store after every token).
void decode_token(const Problem& p, int64_t t, float* state, std::vector<float>& y) {
  const ssmv::Shape& s = p.shape;
  std::vector<float> dB(s.N);
  for (int64_t h = 0; h < s.H; ++h) {
    const int64_t g = s.group_of(h);
    float d = p.dt[p.dt_index(t, h)];
    if (p.has_dt_bias()) d = d + p.dt_bias[h];
    if (p.dt_softplus) d = softplus_f(d);
    d = std::min(std::max(d, p.dt_limit_lo), p.dt_limit_hi);
    const float a = exp_f(d * p.A[h]);
    for (int64_t n = 0; n < s.N; ++n) dB[n] = d * p.B[p.bc_index(t, g, n)];
    for (int64_t q = 0; q < s.P; ++q) {
      const float x = p.x[p.x_index(t, h, q)];
      float* row = state + (h * s.P + q) * s.N;
      std::array<float, 16> acc{};
      for (int64_t n = 0; n < s.N; ++n) {
        row[n] = std::fmaf(dB[n], x, a * row[n]);
        acc[n % 16] = std::fmaf(p.C[p.bc_index(t, g, n)], row[n], acc[n % 16]);
      }
      for (int stride = 8; stride >= 1; stride /= 2) {
        for (int u = 0; u < stride; ++u) acc[u] = acc[u] + acc[u + stride];
      }
      float out = p.D.empty() ? acc[0] : std::fmaf(p.d_value(h, q), x, acc[0]);
      if (p.has_z()) {
        const float z = p.z[p.x_index(t, h, q)];
        out = out * (z * sigmoid_f(z));
      }
      y[p.x_index(t, h, q)] = out;  // fp32 output: no rounding below fp32
    }
  }
}

TEST(ConsumerKernel, Fp32DecodeIsWithinTheSsuContract) {
  const Problem p = ssmv::realistic_problem(ssmv::Shape{{0, 9, 20}, 4, 8, 32, 2},
                                            ssmv::Formats{ssmv::Format::bf16, ssmv::Format::fp32, ssmv::Format::fp32},
                                            2024);
  const ssmv::Shape& s = p.shape;
  const int64_t per = s.state_elements_per_sequence();
  std::vector<float> y(s.num_tokens() * s.H * s.P);
  std::vector<float> states = p.initial_state;  // [S, H, P, N]: the final states when done
  for (int64_t seq = 0; seq < s.num_sequences(); ++seq) {
    for (int64_t t = s.cu_seqlens[seq]; t < s.cu_seqlens[seq + 1]; ++t) decode_token(p, t, &states[seq * per], y);
  }

  const ssmv::Contract ssu = ssmv::verify::contract_preset("ssu", 0);
  const ssmv::verify::KernelCheck kc = ssmv::verify::check_outputs(p, ssu, "consumer_fp32_decode", y, states);
  EXPECT_WITHIN_CONTRACT(kc);
  ASSERT_EQ(kc.tensors.size(), 2u);  // y and final_state
  // Not vacuous: some fp32 outputs are inexact, so the bound was exercised.
  EXPECT_GT(kc.tensors[0].count(ssmv::verify::Verdict::within_contract), 0);

  // One output moved by 1% (at least 1e-2), far beyond its bound: caught.
  std::vector<float> bad = y;
  bad[17] += std::max(1e-2f, std::fabs(bad[17]) * 1e-2f);
  const ssmv::verify::KernelCheck kb = ssmv::verify::check_outputs(p, ssu, "consumer_fp32_decode", bad, states);
  EXPECT_FALSE(kb.ok());
  EXPECT_EQ(kb.tensors[0].count(ssmv::verify::Verdict::violation), 1);
  EXPECT_FALSE(ssmv::verify::within_contract("kb", kb));  // what EXPECT_WITHIN_CONTRACT(kb) would report
}

}  // namespace
