// The prefill/decode hand-off and the rotation's period, on problems drawn like upstream's
// tests (test_problem.h): two sequences of 6 and 5 tokens, H = 2, G = 1, P = 3, N = 8, R = 2,
// with D, z and an initial four-part state.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "reference/mamba3/tests/test_problem.h"

namespace ssmv::ref::mamba3 {
namespace {

using testing::random_problem;
using testing::slice;

constexpr uint64_t kSeed = 0x6d616d6261330001;  // one recorded seed for every draw here

Problem drawn() { return random_problem({0, 6, 11}, 2, 3, 8, 1, 2, kSeed, true); }

::testing::AssertionResult same(const CertifiedValues& a, size_t i, const CertifiedValues& b, size_t j) {
  if (a.hi[i] == b.hi[j] && a.lo[i] == b.lo[j] && a.magnitude[i] == b.magnitude[j] && a.fp32[i] == b.fp32[j] &&
      a.bf16[i] == b.bf16[j] && a.fp16[i] == b.fp16[j]) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << std::hexfloat << "element " << i << " (" << a.hi[i] << " + " << a.lo[i]
                                       << ", magnitude " << a.magnitude[i] << ") vs " << j << " (" << b.hi[j] << " + "
                                       << b.lo[j] << ", magnitude " << b.magnitude[j] << ")";
}

void expect_same_tensor(const CertifiedValues& a, const CertifiedValues& b, const char* name) {
  ASSERT_EQ(a.size(), b.size()) << name;
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(same(a, i, b, i)) << name;
}

// A prefill of the first len − k tokens of each sequence, then k decode steps of one token
// each, gives bit for bit the y and final four-part state of a prefill over every token:
// decode() continues both certified runs from their own unrounded variables.
TEST(Mamba3Decode, PrefillThenDecodeStepsEqualsOnePrefill) {
  const Problem pr = drawn();
  const Result full = compute(pr);
  const std::vector<int64_t> len{6, 5};
  for (int64_t k : {1, 3}) {
    Result r = compute(slice(pr, {0, 0}, {len[0] - k, len[1] - k}));
    for (int64_t j = 0; j < k; ++j) {
      const std::vector<int64_t> at{len[0] - k + j, len[1] - k + j};
      const Problem one = slice(pr, at, {at[0] + 1, at[1] + 1});
      r = decode(one, r.carried);
      for (int64_t q = 0; q < 2; ++q) {
        const int64_t t = pr.shape.cu_seqlens[q] + at[q];
        for (int64_t h = 0; h < 2; ++h) {
          for (int64_t p = 0; p < 3; ++p) {
            EXPECT_TRUE(same(r.y, size_t(one.x_index(q, h, p)), full.y, size_t(pr.x_index(t, h, p))))
                << "k " << k << " step " << j << " sequence " << q;
          }
        }
      }
    }
    expect_same_tensor(r.angle_state, full.angle_state, "angle_state");
    expect_same_tensor(r.state, full.state, "state");
    expect_same_tensor(r.B_prev, full.B_prev, "B_prev");
    expect_same_tensor(r.x_prev, full.x_prev, "x_prev");
  }
  // Not vacuous: the state is non-zero and the angles have turned.
  EXPECT_GT(full.state.magnitude[0], 0.0);
  EXPECT_NE(full.angle_state.hi[0], double(pr.initial.angle[0]));
}

// θ and θ + 2π turn B and C alike: decoding the last tokens from a carried state whose
// angles (in both runs, at each run's precision) are one turn further gives every y and the
// reduced angle state within the two certificates, and the same correct roundings.
TEST(Mamba3Decode, AnAngleOneTurnFurtherGivesTheSameOutputs) {
  const Problem pr = drawn();
  const Result prefix = compute(slice(pr, {0, 0}, {4, 3}));
  CarriedState turned = prefix.carried.copy();
  for (std::vector<PairState>* run : {&turned.working, &turned.check}) {
    for (PairState& pair : *run) {
      for (Num& theta : pair.angle) {
        Num two_pi;
        two_pi.init(mpfr_get_prec(theta.get()));
        mpfr_const_pi(two_pi.get(), MPFR_RNDN);
        mpfr_mul_2ui(two_pi.get(), two_pi.get(), 1, MPFR_RNDN);
        mpfr_add(theta.get(), theta.get(), two_pi.get(), MPFR_RNDN);
      }
    }
  }
  const Problem rest = slice(pr, {4, 3}, {6, 5});
  const Result a = decode(rest, prefix.carried);
  const Result b = decode(rest, turned);
  const auto within = [](const CertifiedValues& u, const CertifiedValues& v, size_t i) {
    const double difference = (u.hi[i] - v.hi[i]) + (u.lo[i] - v.lo[i]);
    return std::fabs(difference) <= 0x1p-62 * u.magnitude[i];  // 2^-64 each, with room for the double-double
  };
  double largest = 0;
  for (size_t i = 0; i < a.y.size(); ++i) {
    EXPECT_TRUE(within(a.y, b.y, i)) << std::hexfloat << "y[" << i << "] " << a.y.hi[i] << " vs " << b.y.hi[i];
    EXPECT_EQ(a.y.fp32[i], b.y.fp32[i]) << "y[" << i << "]";
    largest = std::max(largest, std::fabs(a.y.hi[i]));
  }
  for (size_t i = 0; i < a.angle_state.size(); ++i) {
    EXPECT_TRUE(within(a.angle_state, b.angle_state, i)) << "angle_state[" << i << "]";
  }
  EXPECT_GT(largest, 1e-3);  // not vacuous
}

TEST(Mamba3Decode, RefusesACarriedStateOfAnotherShapeOrAnInitialState) {
  const Problem pr = drawn();
  const Result prefix = compute(slice(pr, {0, 0}, {5, 4}));
  Problem other = random_problem({0, 1, 2}, 2, 3, 8, 1, 1, kSeed, false);  // R = 1, carried has 2
  try {
    decode(other, prefix.carried);
    ADD_FAILURE() << "decoded with R = 1 from a state of R = 2";
  } catch (const ssmv::ProblemError& e) {
    EXPECT_NE(std::string(e.what()).find("field 'R' = 2, the problem and options need 1"), std::string::npos)
        << e.what();
  }
  Problem with_initial = slice(pr, {5, 4}, {6, 5});
  with_initial.initial = pr.initial;
  EXPECT_THROW(decode(with_initial, prefix.carried), ssmv::ProblemError);
  Options more_bits;
  more_bits.precision_bits = 160;
  EXPECT_THROW(decode(slice(pr, {5, 4}, {6, 5}), prefix.carried, more_bits), ssmv::ProblemError);
}

}  // namespace
}  // namespace ssmv::ref::mamba3
