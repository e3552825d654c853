// Problems and comparisons for the Mamba-3 reference tests: problems built from explicit
// values or drawn from a fixed seed, a slice of a problem's tokens, and a double-double
// compared with an MPFR value.
#pragma once

#include <gtest/gtest.h>
#include <mpfr.h>

#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "reference/mamba3/reference.h"
#include "reference/tests/reference_test_util.h"  // testing::Mp
#include "spec/format.h"
#include "spec/mamba3/problem.h"
#include "spec/mamba3/random_problem.h"

namespace ssmv::ref::mamba3::testing {

using ssmv::mamba3::Problem;
using ssmv::ref::testing::Mp;

// Every tensor zero, and upstream's draws: spec/mamba3/random_problem.h (`ssmv bounds` draws its
// Mamba-3 problems with them too).
using ssmv::mamba3::random_problem;
using ssmv::mamba3::zero_problem;

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
