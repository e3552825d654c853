// Contract features FlashInfer's decode kernel needs (issue 17): the state's storage cadence
// (tokens per launch, docs/bounds.md [2.6]), stochastic rounding as a rounding mode and its
// bias test (verify/judge/stochastic_bias.h), and the rounding mode in contract files. (Flushed
// subnormal operands under flush_to_zero: bound_test.cpp FlushToZero.)
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "fast/common/recurrence_math.h"
#include "fast/ssu/arithmetic.h"
#include "reference/reference.h"
#include "spec/realistic_problem.h"
#include "verify/bound/error_model.h"
#include "verify/bound/sequential_bound.h"
#include "verify/contracts/contract_json.h"
#include "verify/judge/exact_bounds.h"
#include "verify/judge/external_check.h"
#include "verify/judge/stochastic_bias.h"

namespace ssmv::verify {
namespace {

// A twin-like emulation of a decode kernel launched on K tokens of every sequence at a time:
// the bundled SSU twin's per-thread arithmetic (fast/ssu/arithmetic.h: δ, exp, the fused update)
// with the state carried in fp32 within a launch and rounded to the problem's state format at
// the launch's end (`round_every_token`: after every token instead); y from the unrounded fp32
// state, summed in double (more accurate than any fp32 order the contract allows).
struct Emulated {
  std::vector<float> y, final_states;
};

Emulated emulate(const Problem& p, int64_t K, bool round_every_token) {
  const Shape& s = p.shape;
  Emulated out;
  out.y.assign(size_t(s.num_tokens() * s.H * s.P), 0.0f);
  out.final_states.assign(size_t(s.num_sequences() * s.H * s.P * s.N), 0.0f);
  for (int64_t q = 0; q < s.num_sequences(); ++q) {
    for (int64_t h = 0; h < s.H; ++h) {
      std::vector<float> S(size_t(s.P * s.N));
      for (size_t i = 0; i < S.size(); ++i) {
        S[i] = p.has_initial_state() ? p.initial_state[size_t(p.state_index(q, h, 0, 0)) + i] : 0.0f;
      }
      for (int64_t t = s.cu_seqlens[q]; t < s.cu_seqlens[q + 1]; ++t) {
        const float d = fm::delta(p.dt[p.dt_index(t, h)], p.has_dt_bias(), p.has_dt_bias() ? p.dt_bias[h] : 0.0f,
                                  p.dt_softplus, p.dt_limit_lo, p.dt_limit_hi);
        const float a = fm::exp(d * p.A[h]);
        const int64_t pos = t - s.cu_seqlens[q];
        const bool launch_end = round_every_token || (pos + 1) % K == 0 || t + 1 == s.cu_seqlens[q + 1];
        for (int64_t pp = 0; pp < s.P; ++pp) {
          const float x = p.x[p.x_index(t, h, pp)];
          double acc = 0;
          for (int64_t n = 0; n < s.N; ++n) {
            const int64_t g = s.group_of(h);
            float& st = S[size_t(pp * s.N + n)];
            st = ssu::update_state(st, a, d * p.B[p.bc_index(t, g, n)], x);
            acc += double(p.C[p.bc_index(t, g, n)]) * double(st);
          }
          for (int64_t n = 0; n < s.N && launch_end; ++n) {
            float& st = S[size_t(pp * s.N + n)];
            st = float(round_value(p.formats.state, st));
          }
          const float y = fm::output_epilogue(float(acc), p.has_D(), p.has_D() ? p.d_value(h, pp) : 0.0f, x, p.has_z(),
                                              p.has_z() ? p.z[p.x_index(t, h, pp)] : 0.0f);
          out.y[size_t(p.x_index(t, h, pp))] = float(round_value(p.formats.output, y));
        }
      }
      for (size_t i = 0; i < S.size(); ++i) out.final_states[size_t(p.state_index(q, h, 0, 0)) + i] = S[i];
    }
  }
  return out;
}

int64_t violations(const KernelCheck& kc) {
  int64_t v = 0;
  for (const TensorReport& t : kc.tensors) v += t.count(Verdict::violation) + t.count(Verdict::invalid);
  return v;
}

// Two sequences of 8 tokens, a bf16 state: launches of 4 tokens store twice per sequence.
Problem cadence_problem() {
  const Shape s{{0, 8, 16}, 2, 4, 16, 1};
  return realistic_problem(s, Formats{Format::bf16, Format::bf16, Format::fp32}, 7);
}

TEST(TokensPerLaunch, AnEmulationStoringAtLaunchEndsIsWithinTheBound) {
  const Problem p = cadence_problem();
  const Contract c = contract_preset("ssu", 0);
  for (int64_t K : {2, 4, 8}) {
    const Emulated e = emulate(p, K, false);
    const KernelCheck kc = check_outputs(p, c, "emulation", e.y, e.final_states, ElementDetail::summary, K);
    EXPECT_EQ(violations(kc), 0) << "K = " << K;
  }
  // Rounding after every token is the K = 1 cadence, judged by its own bound.
  const Emulated every = emulate(p, 1, true);
  EXPECT_EQ(violations(check_outputs(p, c, "emulation", every.y, every.final_states, ElementDetail::summary, 1)), 0);
}

TEST(TokensPerLaunch, AKTokenLaunchBoundIsTighterThanOneTokenPerLaunch) {
  const Problem p = cadence_problem();
  const ref::ExactResult exact = ref::compute(p);
  const Contract c = contract_preset("ssu", 0);
  const bound::SequentialBounds one = bound::sequential_bounds(sequential_input_for(p, c, exact, 1));
  const bound::SequentialBounds four = bound::sequential_bounds(sequential_input_for(p, c, exact, 4));
  const bound::SequentialBounds whole = bound::sequential_bounds(sequential_input_for(p, c, exact, 0));
  int64_t tighter = 0;
  for (size_t i = 0; i < one.stored_state.size(); ++i) {
    EXPECT_LE(four.stored_state[i], one.stored_state[i]) << i;
    EXPECT_LE(whole.stored_state[i], four.stored_state[i]) << i;
    tighter += four.stored_state[i] < 0.9 * one.stored_state[i];
  }
  EXPECT_GT(tighter, int64_t(one.stored_state.size()) / 2) << "two stores instead of eight per sequence";
  for (size_t i = 0; i < one.y.size(); ++i) EXPECT_LE(four.y[i], one.y[i]) << i;
  // The cadence the bound assumes must hold: storing every token exceeds the K = 4 bound.
  const Emulated every = emulate(p, 1, true);
  EXPECT_GT(violations(check_outputs(p, c, "emulation", every.y, every.final_states, ElementDetail::summary, 4)), 0);
}

TEST(TokensPerLaunch, ALengthThatIsNoMultipleOfKIsRefusedNamingTheField) {
  const Problem p = cadence_problem();
  ExternalKernel k{"ssu", "", contract_preset("ssu", 0), {}, {}, 3};
  try {
    validate_external(p, k);
    FAIL() << "no error";
  } catch (const ProblemError& e) {
    EXPECT_NE(std::string(e.what()).find("tokens_per_launch = 3: sequence 0 has 8 tokens"), std::string::npos) << e.what();
  }
  k.family = "chunk_scan";
  k.contract = contract_preset("chunk_scan.production", 64);
  k.tokens_per_launch = 2;
  EXPECT_THROW(validate_external(p, k), ProblemError);
}

// A stochastic rounding costs a whole ULP of the format, and below the smallest normal the
// value itself (a rounding may flush it); to nearest half an ULP.
TEST(StochasticRounding, TheBoundAllowsAWholeUlp) {
  for (double v : {1.0, 3.7, 1e-3, 70000.0}) {
    // |value| within [v/2, v]: no flush possible above 2^-14
    EXPECT_EQ(bound::rounding_error_at_most(Format::fp16, RoundingMode::stochastic, v, v / 2), ulp_of(Format::fp16, v));
    EXPECT_EQ(bound::rounding_error_at_most(Format::fp16, RoundingMode::nearest, v), 0.5 * ulp_of(Format::fp16, v));
  }
  // Below 2^-14 (or without a lower bound on |value|) the value itself may be flushed.
  EXPECT_EQ(bound::rounding_error_at_most(Format::fp16, RoundingMode::stochastic, 3e-5, 1e-5), 3e-5);
  EXPECT_EQ(bound::rounding_error_at_most(Format::fp16, RoundingMode::stochastic, 1e-3), std::ldexp(1.0, -14));
  Contract c = contract_preset("flashinfer.ssu.sr", 0);
  const Formats f{Format::bf16, Format::fp16, Format::bf16};
  EXPECT_EQ(bound::store_rounding_error(c, Point::stored_state, f, Format::fp16, 2.0, 1.0), ulp_of(Format::fp16, 2.0));
  EXPECT_EQ(bound::store_rounding_error(c, Point::output, f, Format::bf16, 2.0), 0.5 * ulp_of(Format::bf16, 2.0));
  c = contract_preset("flashinfer.ssu", 0);
  EXPECT_EQ(bound::store_rounding_error(c, Point::stored_state, f, Format::fp16, 2.0), 0.5 * ulp_of(Format::fp16, 2.0));
}

// Synthetic fp16 stores of 200000 values with a small error before the store: an unbiased
// stochastic rounding (up with probability = the fraction) is not flagged, one that rounds up
// with probability 0.6 whatever the fraction (mean error ≈ +0.1 ULP) is.
TEST(StochasticRounding, ABiasedRoundingIsFlaggedAnUnbiasedOneIsNot) {
  std::mt19937_64 rng(17);
  std::normal_distribution<double> nd(0, 1);
  std::uniform_real_distribution<double> ud(0, 1);
  const size_t n = 200000;
  std::vector<double> exact(n), unbiased(n), biased(n), pre(n);
  for (size_t i = 0; i < n; ++i) {
    exact[i] = nd(rng);
    const double w = ulp_of(Format::fp16, std::fabs(exact[i]));
    pre[i] = 1e-3 * w;  // the kernel's value before the store lies within 0.001 ULP
    const double v = exact[i] + pre[i] * (2 * ud(rng) - 1);
    const double lo = std::floor(v / w) * w, frac = (v - lo) / w;
    unbiased[i] = ud(rng) < frac ? lo + w : lo;
    biased[i] = ud(rng) < 0.6 ? lo + w : lo;
  }
  const StochasticBias u = stochastic_bias(exact, unbiased, Format::fp16, pre, 1e-6);
  const StochasticBias b = stochastic_bias(exact, biased, Format::fp16, pre, 1e-6);
  EXPECT_EQ(u.elements + u.below_normal, int64_t(n));
  EXPECT_LT(u.below_normal, int64_t(n) / 1000);  // |e| < 2^-13 of N(0, 1)
  EXPECT_FALSE(u.biased) << u.text();
  EXPECT_TRUE(b.biased) << b.text();
  EXPECT_NEAR(b.mean_ulps, 0.1, 0.01) << b.text();
  // Hoeffding at α = 1e-6 with unit ranges: sqrt(ln(2e6)/(2n)) = 0.0060.
  EXPECT_NEAR(u.deviation_ulps, std::sqrt(std::log(2e6) / (2.0 * double(u.elements))), 1e-4);
  EXPECT_THROW(stochastic_bias(exact, unbiased, Format::fp16, pre, 0.0), std::invalid_argument);
}

TEST(ContractFile, RoundingModeIsReadWrittenAndRefusedWhereItCannotBe) {
  const Contract sr = contract_preset("flashinfer.ssu.sr", 0);
  const Contract back = contract_from_json(contract_to_json(sr), "sr.json");
  ASSERT_EQ(back.roundings.size(), 2u);
  EXPECT_EQ(back.roundings[0].mode, RoundingMode::stochastic);
  EXPECT_EQ(back.roundings[1].mode, RoundingMode::nearest);
  EXPECT_EQ(json::dump(contract_to_json(back), 2), json::dump(contract_to_json(sr), 2));
  const std::string plain = json::dump(contract_to_json(contract_preset("flashinfer.ssu", 0)), 2);
  EXPECT_EQ(plain.find("\"mode\""), std::string::npos) << "nearest is the default and not written";
  const auto refused = [&](const std::string& point, const std::string& format, const std::string& mode) {
    json::Value v = contract_to_json(sr);
    v["roundings"][0] = json::Value::object({{"point", point}, {"format", format}, {"mode", mode}});
    try {
      contract_from_json(v, "k.json");
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(refused("stored_state", "fp32", "stochastic").find("field 'roundings'[0].'mode'"), std::string::npos);
  EXPECT_NE(refused("stored_state", "fp32", "stochastic").find("'stochastic' at point 'stored_state' in format 'fp32'"),
            std::string::npos);
  EXPECT_NE(refused("incoming_state", "bf16", "stochastic").find("'stochastic' at point 'incoming_state'"),
            std::string::npos);
  EXPECT_NE(refused("stored_state", "state", "upward").find("unknown mode 'upward' (expected nearest, stochastic)"),
            std::string::npos);
  EXPECT_EQ(refused("stored_state", "fp16", "stochastic"), "");
}

}  // namespace
}  // namespace ssmv::verify
