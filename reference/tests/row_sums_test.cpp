// reference/row_sums.h: weighted_row_sums gives, for every row, the bits of the scalar loop
// acc += a[n]·row[n] in the order of n from zero, whatever P and N (whole blocks of four rows
// and of four n, and the rest), with terms of spread magnitudes so that any other order of
// the adds would round differently somewhere.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "reference/row_sums.h"
#include "spec/splitmix.h"

namespace ssmv::ref {
namespace {

double spread_value(uint64_t& state) {
  const uint64_t z = splitmix64_next(state);
  return double(z >> 11) * 0x1p-53 * std::ldexp(1.0, int(z & 63) - 32);  // [0, 1) × 2^[-32, 31]
}

TEST(WeightedRowSums, EqualTheScalarLoopBitForBit) {
  uint64_t state = 2026;
  for (int64_t N : {1, 3, 4, 5, 7, 8, 64, 127, 128}) {
    for (int64_t P : {1, 3, 4, 5, 8, 64}) {
      std::vector<double> a(static_cast<size_t>(N)), rows(static_cast<size_t>(P * N)), got(static_cast<size_t>(P));
      for (double& v : a) v = spread_value(state);
      for (double& v : rows) v = spread_value(state);
      weighted_row_sums(a.data(), rows.data(), P, N, got.data());
      for (int64_t p = 0; p < P; ++p) {
        double acc = 0;
        for (int64_t n = 0; n < N; ++n) acc += a[size_t(n)] * rows[size_t(p * N + n)];
        EXPECT_EQ(std::memcmp(&acc, &got[size_t(p)], sizeof acc), 0) << "P " << P << " N " << N << " row " << p;
      }
    }
  }
}

}  // namespace
}  // namespace ssmv::ref
