// Contract features FlashInfer's decode kernel needs (issue 17): the state's storage cadence
// (tokens per launch, docs/bounds.md [2.6]), stochastic rounding as a rounding mode and its
// bias test (verify/judge/stochastic_bias.h), the rounding mode in contract files, and the
// scaled 16-bit integer state (int16_scaled: verify/bound/error_model.h scaled_rounding_error).
// (Flushed subnormal operands under flush_to_zero: bound_test.cpp FlushToZero.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
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

// FlashInfer's store of one state row to int16_scaled (kernel_selective_state_update_stp.cuh:
// 253-275, conversion.cuh:87-93), in host fp32: e = 32767/max|s| (1 for an all-zero row),
// d = 1/e, q = rint(clip(s·e, ±32767)), each value read back as fl(q·d). `e_ulps` and `d_ulps`
// move e and d by that many fp32 ULPs (the GPU's div.approx and rcp.approx err by up to 2 and
// 1); `scale_factor` multiplies the decode scale (≠ 1: a planted wrong scale).
void store_scaled_row(float* row, int64_t N, int e_ulps = 0, int d_ulps = 0, float scale_factor = 1) {
  float m = 0;
  for (int64_t n = 0; n < N; ++n) m = std::max(m, std::fabs(row[n]));
  const auto step = [](float v, int k) {
    for (; k > 0; --k) v = std::nextafter(v, INFINITY);
    for (; k < 0; ++k) v = std::nextafter(v, -INFINITY);
    return v;
  };
  const float e = m == 0 ? 1.0f : step(32767.0f / m, e_ulps);
  const float d = step(1.0f / e, d_ulps) * scale_factor;
  for (int64_t n = 0; n < N; ++n) {
    const float q = std::nearbyint(std::clamp(row[n] * e, -32767.0f, 32767.0f));
    row[n] = decode_scaled(Format::int16_scaled, int64_t(q), d);
  }
}

// A twin-like emulation of a decode kernel launched on K tokens of every sequence at a time:
// the bundled SSU twin's per-thread arithmetic (fast/ssu/arithmetic.h: δ, exp, the fused update)
// with the state carried in fp32 within a launch and rounded to the problem's state format at
// the launch's end (`round_every_token`: after every token instead; an int16_scaled state row by
// row as store_scaled_row, its decode scale times `scale_factor`); y from the unrounded fp32
// state, summed in double (more accurate than any fp32 order the contract allows).
struct Emulated {
  std::vector<float> y, final_states;
};

Emulated emulate(const Problem& p, int64_t K, bool round_every_token, float scale_factor = 1) {
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
          if (launch_end && block_scaled(p.formats.state)) store_scaled_row(&S[size_t(pp * s.N)], s.N, 0, 0, scale_factor);
          for (int64_t n = 0; n < s.N && launch_end && !block_scaled(p.formats.state); ++n) {
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

// The store to int16_scaled (error_model.h scaled_rounding_error) for a row whose largest |value|
// is M = 32767 (decode scale d ≈ 1) and an element of magnitude 1:
//   (½ + 32767·2^-20)·d + 2^-22·1 + 2^-126·(1 + d) + min(M, 2^-112), d = M/32767·(1 + 2^-20).
TEST(ScaledInt16State, TheStoreBoundIsHalfAQuantumPlusTheScalesFp32Errors) {
  const double d = 1 + 0x1p-20;
  const double want = (0.5 + 32767 * 0x1p-20) * d + 0x1p-22 + 0x1p-126 * (1 + d) + 0x1p-112;
  EXPECT_EQ(bound::scaled_rounding_error(Format::int16_scaled, 1.0, 32767.0), want);
  EXPECT_EQ(bound::rounding_error_at_most(Format::int16_scaled, RoundingMode::nearest, 1.0, 0, 32767.0), want);
  // The quantum is the row's: a tiny element of a large row errs by half of it.
  EXPECT_GT(bound::scaled_rounding_error(Format::int16_scaled, 1e-9, 32767.0), 0.5);
  // A row below 2^-113 overflows e = 32767/M to +Inf and decodes to 0: the value itself.
  EXPECT_GE(bound::scaled_rounding_error(Format::int16_scaled, 1e-35, 1e-35), 1e-35);
  EXPECT_EQ(bound::scaled_rounding_error(Format::int16_scaled, 1.0, 0x1p126), INFINITY);
  EXPECT_THROW(bound::rounding_error_at_most(Format::int16_scaled, RoundingMode::nearest, 1.0), std::invalid_argument);
  EXPECT_THROW(bound::rounding_error_at_most(Format::int16_scaled, RoundingMode::stochastic, 1.0, 0, 2.0),
               std::invalid_argument);
  EXPECT_THROW(bound::scaled_rounding_error(Format::int16_scaled, 2.0, 1.0), std::invalid_argument);
  EXPECT_THROW(bound::scaled_rounding_error(Format::fp16, 1.0, 1.0), std::invalid_argument);
}

// FlashInfer's quantization emulated in host fp32 over 20000 random rows of 128 (magnitudes
// 2^-60..2^60, a zero or tiny element now and then), e and d moved by up to the GPU's 2 and 1
// ULPs: every decoded element within the bound of its row; and the bound is tight — in most rows
// the worst element uses over 90 % of it (an error of ½ quantum out of the bound's 0.531 is nearly
// reached among ~110 uniformly spread rounding errors).
TEST(ScaledInt16State, EmulatedStoresAreWithinTheBoundAndNearlyReachIt) {
  std::mt19937_64 rng(20261202);
  std::normal_distribution<float> nd(0, 1);
  std::uniform_int_distribution<int> ex(-60, 60), eu(-2, 2), du(-1, 1), pick(0, 15);
  std::vector<double> row_worst;
  for (int r = 0; r < 20000; ++r) {
    std::vector<float> s(128), q;
    const int e = ex(rng);
    for (float& v : s) v = std::ldexp(nd(rng), e) * (pick(rng) == 0 ? 0.0f : pick(rng) == 1 ? 1e-6f : 1.0f);
    q = s;
    store_scaled_row(q.data(), 128, eu(rng), du(rng));
    double M = 0, worst = 0;
    for (float v : s) M = std::max(M, double(std::fabs(v)));
    for (size_t n = 0; n < s.size(); ++n) {
      const double err = std::fabs(double(q[n]) - double(s[n]));
      const double b = bound::scaled_rounding_error(Format::int16_scaled, std::fabs(double(s[n])), M);
      ASSERT_LE(err, b) << "row " << r << " element " << n;
      worst = std::max(worst, err / b);
    }
    if (M > 0) row_worst.push_back(worst);
  }
  std::sort(row_worst.begin(), row_worst.end());
  std::printf("int16_scaled stores, worst error/bound per row over %zu rows: min %.4f, median %.4f, max %.4f\n",
              row_worst.size(), row_worst.front(), row_worst[row_worst.size() / 2], row_worst.back());
  EXPECT_GT(row_worst[row_worst.size() / 2], 0.9);
  EXPECT_GT(row_worst.back(), 0.93);
}

// Two sequences of 8 tokens decoded with an int16_scaled state, 1, 2, 4 and 8 tokens per launch,
// each store as FlashInfer's (store_scaled_row): within the ssu preset's bound (the emulation is
// the bundled twin's arithmetic). A decode scale 2^-10 off in every row — a stale or wrongly
// reduced scale — is a VIOLATION in final_state.
TEST(ScaledInt16State, AnEmulatedInt16DecodeIsWithinItsBoundAndAWrongScaleIsNot) {
  const Shape s{{0, 8, 16}, 2, 4, 16, 1};
  const Problem p = realistic_problem(s, Formats{Format::bf16, Format::int16_scaled, Format::fp32}, 7);
  const Contract c = contract_preset("ssu", 0);
  for (int64_t K : {1, 2, 4, 8}) {
    const Emulated e = emulate(p, K, false);
    const KernelCheck kc = check_outputs(p, c, "emulation", e.y, e.final_states, ElementDetail::summary, K);
    EXPECT_EQ(violations(kc), 0) << "K = " << K;
    EXPECT_EQ(kc.tensors[1].name, "final_state");
    EXPECT_EQ(kc.tensors[1].format, Format::int16_scaled);
    EXPECT_GT(kc.tensors[1].max_bound_usage, 0.3) << "K = " << K << ": the quantization dominates the state's bound";
    std::printf("emulated int16_scaled decode, %lld token(s) per launch: usage y %.3f, final_state %.3f\n", (long long)K,
                kc.tensors[0].max_bound_usage, kc.tensors[1].max_bound_usage);
  }
  const Emulated wrong = emulate(p, 4, false, 1.0f + 0x1p-10f);
  const KernelCheck kc = check_outputs(p, c, "emulation", wrong.y, wrong.final_states, ElementDetail::summary, 4);
  EXPECT_GT(kc.tensors[1].count(Verdict::violation), 0);
}

TEST(ScaledInt16State, AChunkedKernelOrAStochasticContractIsRefusedNamingTheFormat) {
  const Shape s{{0, 8, 16}, 2, 4, 16, 1};
  const Problem p = realistic_problem(s, Formats{Format::bf16, Format::int16_scaled, Format::bf16}, 7);
  const auto error = [&](const ExternalKernel& k) {
    try {
      validate_external(p, k);
    } catch (const ProblemError& e) {
      return std::string(e.what());
    }
    return std::string("<no error>");
  };
  EXPECT_EQ(error({"chunk_scan", "", contract_preset("chunk_scan.production", 64), {}, {}, 1}),
            "state format 'int16_scaled' given for kernel 'chunk_scan': a block-scaled state is bounded for a decode "
            "kernel (kernel ssu) only");
  EXPECT_EQ(error({"ssu", "", contract_preset("flashinfer.ssu.sr", 0), {}, {}, 1}),
            "state format 'int16_scaled' with contract 'flashinfer.ssu.sr', which rounds 'stored_state' "
            "stochastically: a block-scaled format is rounded to nearest only");
  EXPECT_EQ(error({"ssu", "", contract_preset("flashinfer.ssu", 0), {}, {}, 1}), "<no error>");
  // A block-scaled format is a state format only.
  Problem q = p;
  q.formats.output = Format::int16_scaled;
  EXPECT_THROW(validate(q), ProblemError);
}

}  // namespace
}  // namespace ssmv::verify
