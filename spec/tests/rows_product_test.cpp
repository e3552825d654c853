// spec/rows_product.h: the tiled double product gives every element the bits of adding its
// terms one by one in k order (y += a·x, from 0 or, with onto, from the element's value), for
// shapes that fill its 4-row tiles of 8 or 32 columns and shapes that leave remainders of
// each, in every vector width this CPU runs.
#include "spec/rows_product.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>


namespace ssmv {
namespace {

// Values of mixed signs and exponents, so that the order of the additions shows in the bits.
std::vector<double> mixed(int64_t n, double salt) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[size_t(i)] = std::sin(double(i) * 1.7 + salt) * std::ldexp(1.0, int(i % 23) - 11);
  return v;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// rows_product's own choice (0), then every vector width this CPU runs.
std::vector<int> widths_here() {
  std::vector<int> w{0};
  for (int lanes : rows_product_lanes_here()) w.push_back(lanes);
  return w;
}

TEST(RowsProduct, EveryElementHasTheBitsOfItsTermsInOrder) {
  for (int lanes : widths_here()) {
    for (bool onto : {false, true}) {
      for (int64_t rows : {1, 3, 4, 5, 9}) {
        for (int64_t cols : {1, 7, 8, 19, 32, 45, 64}) {
          for (int64_t K : {0, 1, 5, 33}) {
            const int64_t lda = K + 2, ldb = cols + 1, ldo = cols + 3;  // padded rows: the strides are read
            const std::vector<double> a = mixed(rows * lda, 0.3), b = mixed(K * ldb + 1, 1.1);
            const std::vector<double> start = mixed(rows * ldo, 2.9);
            std::vector<double> out = start;
            const Product<double, double, double> p{rows, K, cols, a.data(), lda, b.data(), ldb, out.data(), ldo, onto};
            if (lanes == 0) {
              rows_product(p);
            } else {
              rows_product_in_lanes(lanes, p);
            }
            for (int64_t r = 0; r < rows; ++r) {
              for (int64_t c = 0; c < cols; ++c) {
                double y = onto ? start[size_t(r * ldo + c)] : 0.0;
                for (int64_t k = 0; k < K; ++k) y += a[size_t(r * lda + k)] * b[size_t(k * ldb + c)];
                const std::string where = "lanes " + std::to_string(lanes) + " onto " + std::to_string(onto) +
                                          " rows " + std::to_string(rows) + " cols " + std::to_string(cols) + " K " +
                                          std::to_string(K) + " at [" + std::to_string(r) + ", " + std::to_string(c) +
                                          "]";
                EXPECT_TRUE(same_bits(out[size_t(r * ldo + c)], y))
                    << where << ": " << out[size_t(r * ldo + c)] << " against " << y;
              }
              // The padding between rows is left alone.
              for (int64_t c = cols; c < ldo && r * ldo + c < int64_t(out.size()); ++c) {
                EXPECT_TRUE(same_bits(out[size_t(r * ldo + c)], start[size_t(r * ldo + c)]));
              }
            }
          }
        }
      }
    }
  }
}

TEST(RowsProduct, AWidthNotBuiltIsRefused) {
  EXPECT_THROW(rows_product_in_lanes(3, Product<double, double, double>{}), std::invalid_argument);
}

}  // namespace
}  // namespace ssmv
