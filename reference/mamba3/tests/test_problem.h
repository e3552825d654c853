// Problems and comparisons for the Mamba-3 reference tests: problems built from explicit
// values or drawn from a fixed seed, a slice of a problem's tokens, and a double-double
// compared with an MPFR value.
#pragma once

#include <gtest/gtest.h>
#include <mpfr.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "reference/mamba3/reference.h"
#include "reference/tests/reference_test_util.h"  // testing::Mp
#include "spec/format.h"
#include "spec/mamba3/problem.h"

namespace ssmv::ref::mamba3::testing {

using ssmv::mamba3::Problem;
using ssmv::ref::testing::Mp;

// Every tensor zero (fp32 formats), no D, no z, no initial state.
inline Problem zero_problem(std::vector<int64_t> cu, int64_t H, int64_t P, int64_t N, int64_t G, int64_t R) {
  Problem pr;
  pr.shape = ssmv::mamba3::Shape{std::move(cu), H, P, N, G, R};
  pr.formats = {Format::fp32, Format::fp32, Format::fp32, Format::fp32};
  const int64_t T = pr.shape.num_tokens();
  pr.x.assign(size_t(T * H * P), 0.0f);
  pr.B.assign(size_t(T * G * N), 0.0f);
  pr.C.assign(size_t(T * G * N), 0.0f);
  pr.dt.assign(size_t(T * H), 0.0f);
  pr.adt.assign(size_t(T * H), 0.0f);
  pr.trap.assign(size_t(T * H), 0.0f);
  pr.angles.assign(size_t(T * H * R), 0.0f);
  pr.B_bias.assign(size_t(H * N), 0.0f);
  pr.C_bias.assign(size_t(H * N), 0.0f);
  return pr;
}

// Draws like upstream's test (tests/ops/triton/test_mamba3_siso.py, create_mamba3_siso_inputs):
// x, B, C, z, trap, angles bf16 N(0,1); dt log-uniform in [1e-3, 0.1]; adt = −a·dt with a
// uniform in [1, 16]; biases fp32 N(0,1); D fp32; an initial four-part state when asked.
inline Problem random_problem(std::vector<int64_t> cu, int64_t H, int64_t P, int64_t N, int64_t G, int64_t R,
                              uint64_t seed, bool with_initial_state) {
  Problem pr = zero_problem(std::move(cu), H, P, N, G, R);
  pr.formats = {Format::bf16, Format::bf16, Format::fp32, Format::bf16};
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const auto bf16 = [&] { return float(round_value(Format::bf16, normal(rng))); };
  const auto fp32 = [&] { return float(normal(rng)); };
  for (std::vector<float>* v : {&pr.x, &pr.B, &pr.C, &pr.trap, &pr.angles}) {
    for (float& e : *v) e = bf16();
  }
  for (size_t i = 0; i < pr.dt.size(); ++i) {
    pr.dt[i] = float(std::exp(std::log(1e-3) + unit(rng) * (std::log(0.1) - std::log(1e-3))));
    pr.adt[i] = -float(1.0 + 15.0 * unit(rng)) * pr.dt[i];
  }
  for (float& e : pr.B_bias) e = fp32();
  for (float& e : pr.C_bias) e = fp32();
  pr.D.resize(size_t(H));
  for (float& e : pr.D) e = fp32();
  pr.z.resize(pr.x.size());
  for (float& e : pr.z) e = bf16();
  if (with_initial_state) {
    const int64_t S = pr.shape.num_sequences();
    pr.initial.angle.resize(size_t(S * H * R));
    for (float& e : pr.initial.angle) e = float(6.28 * unit(rng));
    for (auto [v, n] : {std::pair{&pr.initial.S, S * H * P * N}, std::pair{&pr.initial.B_prev, S * H * N},
                        std::pair{&pr.initial.x_prev, S * H * P}}) {
      v->resize(size_t(n));
      for (float& e : *v) e = fp32();
    }
  }
  return pr;
}

// Tokens [cu[s] + begin[s], cu[s] + end[s]) of each sequence s as a problem of their own; the
// initial state is kept only when every begin is 0.
inline Problem slice(const Problem& full, const std::vector<int64_t>& begin, const std::vector<int64_t>& end) {
  const ssmv::mamba3::Shape& s = full.shape;
  std::vector<int64_t> cu{0};
  for (int64_t q = 0; q < s.num_sequences(); ++q) cu.push_back(cu.back() + end[size_t(q)] - begin[size_t(q)]);
  Problem out = zero_problem(cu, s.H, s.P, s.N, s.G, s.R);
  out.formats = full.formats;
  out.B_bias = full.B_bias;
  out.C_bias = full.C_bias;
  out.D = full.D;
  if (full.has_z()) out.z.assign(out.x.size(), 0.0f);
  bool from_start = true;
  for (int64_t b : begin) from_start = from_start && b == 0;
  if (from_start) out.initial = full.initial;
  const auto copy_rows = [](std::vector<float>& dst, const std::vector<float>& src, int64_t to, int64_t from,
                            int64_t row) {
    for (int64_t i = 0; i < row; ++i) dst[size_t(to * row + i)] = src[size_t(from * row + i)];
  };
  for (int64_t q = 0; q < s.num_sequences(); ++q) {
    for (int64_t k = begin[size_t(q)]; k < end[size_t(q)]; ++k) {
      const int64_t from = s.cu_seqlens[size_t(q)] + k, to = cu[size_t(q)] + k - begin[size_t(q)];
      copy_rows(out.x, full.x, to, from, s.H * s.P);
      if (full.has_z()) copy_rows(out.z, full.z, to, from, s.H * s.P);
      copy_rows(out.B, full.B, to, from, s.G * s.N);
      copy_rows(out.C, full.C, to, from, s.G * s.N);
      copy_rows(out.dt, full.dt, to, from, s.H);
      copy_rows(out.adt, full.adt, to, from, s.H);
      copy_rows(out.trap, full.trap, to, from, s.H);
      copy_rows(out.angles, full.angles, to, from, s.H * s.R);
    }
  }
  return out;
}

// hi + lo of element i within 2^-bits·|expected| of `expected`.
inline ::testing::AssertionResult near(const CertifiedValues& v, size_t i, mpfr_srcptr expected, int bits) {
  Mp diff(v.hi[i]);
  mpfr_add_d(diff.get(), diff.get(), v.lo[i], MPFR_RNDN);
  mpfr_sub(diff.get(), diff.get(), expected, MPFR_RNDN);
  Mp allow;
  mpfr_abs(allow.get(), expected, MPFR_RNDN);
  mpfr_mul_2si(allow.get(), allow.get(), -bits, MPFR_RNDN);
  if (mpfr_cmpabs(diff.get(), allow.get()) <= 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "element " << i << ": " << std::hexfloat << v.hi[i] << " + " << v.lo[i]
                                       << " vs expected " << mpfr_get_d(expected, MPFR_RNDN) << ", diff "
                                       << mpfr_get_d(diff.get(), MPFR_RNDN);
}

}  // namespace ssmv::ref::mamba3::testing
