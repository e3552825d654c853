// Problems for the equivalence of the reference's tiers (fast double-double tier with
// MPFR fallback against MPFR only): realistic ones (spec/realistic_problem.h) with every
// option and format, and adversarial ones that push the fast tier to its limits. Shared
// by reference_tier_equivalence_test (CI), tier_campaign (local, >= 10^5 problems) and
// bench/reference.
#pragma once

#include <gtest/gtest.h>
#include <mpfr.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "reference/reference.h"
#include "spec/format.h"
#include "spec/problem.h"
#include "spec/realistic_problem.h"

namespace ssmv::ref::testing {

enum class Adversity : int {
  none,          // realistic data
  long_memory,   // decay -> 1: A = 0 or tiny, or δ tiny
  cancellation,  // C·S cancels to 2^-12 .. 2^-30 of Σ|C·S|
  tiny,          // inputs scaled far down (fp32 only), subnormal values among them
  huge,          // inputs scaled far up (fp32 only)
  zeros,         // whole heads and token ranges of zeros
  count
};

inline const char* adversity_name(Adversity a) {
  static const char* names[] = {"realistic", "long_memory", "cancellation", "tiny", "huge", "zeros"};
  return names[int(a)];
}

struct TierCase {
  Problem problem;
  Options options;
  std::string what;  // seed and choices, for failure messages
};

// A problem from a seed: shape, formats and options drawn, then the adversity applied.
inline TierCase tier_case(uint64_t seed, Adversity adv, int64_t max_tokens = 12) {
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + uint64_t(adv));
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  auto coin = [&] { return pick(0, 1) == 1; };
  const Format formats[] = {Format::fp32, Format::bf16, Format::fp16};
  Formats f{formats[pick(0, 2)], formats[pick(0, 2)], formats[pick(0, 2)]};
  if (adv == Adversity::tiny || adv == Adversity::huge) f.input = Format::fp32;
  const int64_t G = pick(1, 2), H = G * pick(1, 2), P = pick(1, 4), N = pick(1, 8);
  std::vector<int64_t> cu{0};
  const int64_t S = pick(1, 3);
  for (int64_t s = 0; s < S; ++s) cu.push_back(cu.back() + (coin() ? 1 : pick(1, max_tokens)));
  RealisticOptions ro;
  ro.dt_softplus = coin();
  ro.dt_bias = coin();
  ro.d_mode = DMode(pick(0, 2));
  ro.z = coin();
  ro.initial_state = coin();
  TierCase c;
  c.problem = realistic_problem(Shape{cu, H, P, N, G}, f, seed, ro);
  Problem& pr = c.problem;
  const int64_t T = pr.shape.num_tokens();
  if (pick(0, 3) == 0) {
    pr.dt_limit_lo = 0.002f;
    pr.dt_limit_hi = 0.05f;
  }
  if (adv != Adversity::none) {
    for (FormatValues* v : {&pr.x, &pr.dt, &pr.B, &pr.C, &pr.z}) v->loosen();  // edited below
  }
  auto in_format = [&](FormatValues& v, double scale) {
    for (float& e : v.writable()) e = float(round_value(f.input, double(e) * scale));
  };
  switch (adv) {
    case Adversity::none:
    case Adversity::count:
      break;
    case Adversity::long_memory:
      for (float& a : pr.A) a = coin() ? 0.0f : -0x1p-20f;
      if (coin()) {
        pr.dt_bias.clear();
        pr.dt_softplus = false;
        pr.dt_limit_lo = -INFINITY;
        pr.dt_limit_hi = INFINITY;
        for (float& d : pr.dt.writable()) d = float(round_value(f.input, 0x1p-14 * (1 + 0.5 * double(d))));
      }
      break;
    case Adversity::cancellation: {
      // Pairs of state dims driven alike (B equal) and read against each other (C
      // opposite up to a relative 2^-k): y is a small difference of large terms.
      const int64_t k = pick(12, 30);
      for (int64_t t = 0; t < T; ++t) {
        for (int64_t g = 0; g < G; ++g) {
          for (int64_t n = 0; n + 1 < N; n += 2) {
            const size_t i = size_t(pr.bc_index(t, g, n));
            pr.B.set(i + 1, pr.B[i]);
            pr.C.set(i + 1, float(round_value(f.input, -double(pr.C[i]) * (1 + std::ldexp(1.0, -int(k))))));
          }
        }
      }
      if (!pr.initial_state.empty()) {
        for (size_t i = 0; i + 1 < pr.initial_state.size(); i += 2) pr.initial_state[i + 1] = pr.initial_state[i];
      }
      pr.D.clear();
      break;
    }
    case Adversity::tiny: {
      const double scale = std::ldexp(1.0, -int(pick(40, 75)));
      in_format(pr.x, scale);
      in_format(pr.B, coin() ? scale : 1.0);
      in_format(pr.C, coin() ? scale : 1.0);
      if (coin()) pr.x.set(0, 0x1p-140f);  // a subnormal fp32 input
      break;
    }
    case Adversity::huge: {
      const double scale = std::ldexp(1.0, int(pick(30, 60)));
      in_format(pr.x, scale);
      in_format(pr.B, scale);
      in_format(pr.C, coin() ? scale : 1.0);
      break;
    }
    case Adversity::zeros: {
      const int64_t h0 = pick(0, H - 1);
      for (int64_t t = 0; t < T; ++t) {
        for (int64_t p = 0; p < P; ++p) pr.x.set(size_t(pr.x_index(t, h0, p)), 0.0f);
      }
      const int64_t t0 = pick(0, T - 1);
      for (int64_t n = 0; n < N; ++n) pr.B.set(size_t(pr.bc_index(t0, 0, n)), 0.0f);
      if (pr.has_z()) pr.z.set(0, 0.0f);
      if (coin() && !pr.initial_state.empty()) std::fill(pr.initial_state.begin(), pr.initial_state.end(), 0.0f);
      break;
    }
  }
  if (coin()) {
    for (int64_t k = pick(1, 3); k > 0; --k) c.options.state_positions.push_back(pick(1, T));
  }
  c.options.threads = 1;
  c.what = "seed " + std::to_string(seed) + " " + adversity_name(adv) + " T=" + std::to_string(T) +
           " H=" + std::to_string(H) + " P=" + std::to_string(P) + " N=" + std::to_string(N);
  return c;
}

// The verdict-relevant outputs of a tensor are identical in both tiers: nearest, the
// rounding in every format, magnitude; the values lie within both certified errors.
inline ::testing::AssertionResult same_verdict_outputs(const char* tensor, const ExactValues& a,
                                                       const ExactValues& b, int certified_bits) {
  if (a.size() != b.size()) return ::testing::AssertionFailure() << tensor << ": sizes differ";
  mpfr_t d;
  mpfr_init2(d, 256);
  ::testing::AssertionResult r = ::testing::AssertionSuccess();
  for (size_t i = 0; i < a.size() && r; ++i) {
    auto fail = [&](const char* what) {
      r = ::testing::AssertionFailure() << tensor << "[" << i << "] " << what << ": nearest " << std::hexfloat
                                        << a.nearest[i] << " vs " << b.nearest[i] << ", magnitude "
                                        << a.magnitude[i] << " vs " << b.magnitude[i];
    };
    if (a.nearest[i] != b.nearest[i] || std::signbit(a.nearest[i]) != std::signbit(b.nearest[i])) {
      fail("nearest differs");
    } else if (a.magnitude[i] != b.magnitude[i]) {
      fail("magnitude differs");
    } else {
      for (Format f : {Format::fp32, Format::bf16, Format::fp16}) {
        if (a.rounded(f, i) != b.rounded(f, i)) fail("rounded differs");
      }
      for (const ExactValues* v : {&a, &b}) {
        if (!(v->certified_error[i] <= std::ldexp(v->magnitude[i], -certified_bits)) &&
            !(v->certified_error[i] == 0 && v->magnitude[i] == 0)) {
          fail("certified_error above 2^-certified_bits of the magnitude");
        }
      }
      mpfr_sub(d, a.value[i].backend().data(), b.value[i].backend().data(), MPFR_RNDA);
      mpfr_abs(d, d, MPFR_RNDN);
      if (mpfr_cmp_d(d, (a.certified_error[i] + b.certified_error[i]) * (1 + 0x1p-52)) > 0) {
        fail("values farther apart than both certified errors");
      }
    }
  }
  mpfr_clear(d);
  return r;
}

}  // namespace ssmv::ref::testing
