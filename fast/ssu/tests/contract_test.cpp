// The SSU contract as data: its fields, and that the declared reduction (partials = 16)
// bounds the real depth of the kernel's Σ_n C·S for every N ≤ 256 and both state sizes; the
// octet kernel's order of the same reduction gives the twin's bits.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "fast/ssu/contract.h"
#include "fast/ssu/arithmetic.h"
#include "fast/ssu/params.h"
#include "fast/ssu/twin.h"

namespace ssmv::ssu {
namespace {

TEST(SsuContract, Fields) {
  const Contract c = contract();
  EXPECT_EQ(c.kernel, "ssu");
  EXPECT_EQ(c.family, Family::sequential);
  EXPECT_TRUE(c.softplus_shortcut);
  EXPECT_FALSE(c.flush_to_zero);
  ASSERT_EQ(c.roundings.size(), 2u);
  EXPECT_EQ(c.roundings[0].point, Point::stored_state);
  EXPECT_EQ(c.roundings[0].format, FormatRef::state);
  EXPECT_EQ(c.roundings[1].point, Point::output);
  EXPECT_EQ(c.roundings[1].format, FormatRef::output);
  ASSERT_EQ(c.transcendentals.size(), 3u);
  // Budgets at or above the maxima measured by ssmv_fast_math_ulp (fast_math.h comments).
  EXPECT_GE(c.transcendentals[0].ulp_const, 0.9292);
  EXPECT_GE(c.transcendentals[1].ulp_const, 1.5247);
  EXPECT_GE(c.transcendentals[2].ulp_const, 2.4098);
  EXPECT_EQ(c.gpu_twin_max_ulps, 0);
}

// Depth of the kernel's reduction for N: the longest lane chain (fma count) plus the
// levels of the butterfly that add two non-zero partial sums (ceil(log2(active lanes)),
// active among the row's L lanes).
int64_t actual_depth(int N, int state_bytes) {
  const LaneLayout l = lane_layout(N, state_bytes);
  std::vector<int64_t> count(l.L, 0);
  for (int u = 0; u < l.L; ++u)
    for (int j = 0; j < l.J; ++j)
      for (int v = 0; v < l.V; ++v) count[u] += lane_element(l, u, j, v) < N;
  const int64_t active = std::count_if(count.begin(), count.end(), [](int64_t k) { return k > 0; });
  int64_t levels = 0;
  while ((int64_t{1} << levels) < active) ++levels;
  return *std::max_element(count.begin(), count.end()) + levels;
}

TEST(SsuContract, DeclaredReductionDepthBoundsTheKernelForEveryN) {
  const Reduction& r = contract().reductions.at(0);
  for (int bytes : {4, 2}) {
    for (int N = 1; N <= kMaxN; ++N) {
      EXPECT_GE(reduction_depth(r, N), actual_depth(N, bytes)) << "N = " << N << ", state bytes " << bytes;
      const LaneLayout l = lane_layout(N, bytes);
      EXPECT_LE(l.J * l.V, kMaxLaneElements) << "N = " << N;
      EXPECT_LE(l.V * bytes, 16);
      EXPECT_TRUE(l.L == kWarp || (l.L == 16 && l.J == 1 && l.V * 16 == N)) << "N = " << N;
    }
  }
}

// The octet kernel's row sum: lane m < 8 of the octet folds its logical lanes m + 8f
// (fold_logical_lanes), then shuffles at offsets 4, 2, 1 (emulated: lane m adds lane m ^ o's
// value) — every lane's result has the bits of the twin's butterfly_sum over the L = 8F
// logical lanes, for partials of mixed signs and magnitudes 2^-20 .. 2^20 (where the order of
// fp32 adds shows: the plain left-to-right sum differs on most rows, checked too).
template <int F>
void expect_octet_fold_equals_butterfly(std::mt19937& rng, int rows) {
  constexpr int L = 8 * F;
  std::uniform_real_distribution<float> mantissa(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-20, 20);
  int differs_from_sequential = 0;
  for (int r = 0; r < rows; ++r) {
    std::array<float, kWarp> lanes{};
    for (int u = 0; u < L; ++u) lanes[u] = std::ldexp(mantissa(rng), exponent(rng));
    const float twin = butterfly_sum(lanes, L);
    float octet[8];
    for (int m = 0; m < 8; ++m) {
      float part[F];
      for (int f = 0; f < F; ++f) part[f] = lanes[m + 8 * f];
      octet[m] = fold_logical_lanes<F>(part);
    }
    for (int o = 4; o >= 1; o /= 2) {
      float next[8];
      for (int m = 0; m < 8; ++m) next[m] = octet[m] + octet[m ^ o];
      std::memcpy(octet, next, sizeof octet);
    }
    for (int m = 0; m < 8; ++m) {
      ASSERT_EQ(std::memcmp(&octet[m], &twin, sizeof twin), 0) << "L " << L << ", row " << r << ", lane " << m;
    }
    float sequential = 0.0f;
    for (int u = 0; u < L; ++u) sequential += lanes[u];
    differs_from_sequential += sequential != twin;
  }
  EXPECT_GT(differs_from_sequential, rows / 2) << "L " << L << ": the inputs do not exercise the order";
}

TEST(SsuLanes, OctetFold) {
  std::mt19937 rng(27);
  expect_octet_fold_equals_butterfly<2>(rng, 20000);  // L = 16: 16-bit rows of N = 16·V
  expect_octet_fold_equals_butterfly<4>(rng, 20000);  // L = 32
}

}  // namespace
}  // namespace ssmv::ssu
