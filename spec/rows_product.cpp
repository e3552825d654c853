#include "spec/rows_product.h"

#include <cstring>

#include "spec/vector_clones.h"

namespace ssmv {
namespace {

// Four doubles (one AVX2 register; two SSE2 registers in the baseline clone).
using V4 = double __attribute__((vector_size(32)));

// (By reference: a V4 returned by value from a function compiled without AVX changes the ABI.)
[[gnu::always_inline]] inline void load4(V4& v, const double* p) { std::memcpy(&v, p, sizeof v); }
[[gnu::always_inline]] inline void store4(double* p, const V4& v) { std::memcpy(p, &v, sizeof v); }

// R rows × 8 columns starting at column c: 2R accumulators in registers over the K terms.
template <int R>
[[gnu::always_inline]] inline void tile8(const Product<double, double, double>& p, int64_t r0, int64_t c) {
  V4 acc[R][2];
  for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = V4{0, 0, 0, 0};
  const double* a = p.a + r0 * p.lda;
  for (int64_t k = 0; k < p.K; ++k) {
    V4 b0, b1;
    load4(b0, p.b + k * p.ldb + c);
    load4(b1, p.b + k * p.ldb + c + 4);
    for (int r = 0; r < R; ++r) {
      const double ar = a[r * p.lda + k];
      acc[r][0] += ar * b0;
      acc[r][1] += ar * b1;
    }
  }
  for (int r = 0; r < R; ++r) {
    store4(p.out + (r0 + r) * p.ldo + c, acc[r][0]);
    store4(p.out + (r0 + r) * p.ldo + c + 4, acc[r][1]);
  }
}

// R rows, every column: tiles of 8, then the last cols mod 8 one by one.
template <int R>
[[gnu::always_inline]] inline void row_block(const Product<double, double, double>& p, int64_t r0) {
  int64_t c = 0;
  for (; c + 8 <= p.cols; c += 8) tile8<R>(p, r0, c);
  for (; c < p.cols; ++c) {
    for (int r = 0; r < R; ++r) {
      double acc = 0;
      for (int64_t k = 0; k < p.K; ++k) acc += p.a[(r0 + r) * p.lda + k] * p.b[k * p.ldb + c];
      p.out[(r0 + r) * p.ldo + c] = acc;
    }
  }
}

}  // namespace

SSMV_VECTOR_CLONES void rows_product(const Product<double, double, double>& p) {
  int64_t r = 0;
  for (; r + 4 <= p.rows; r += 4) row_block<4>(p, r);
  for (; r < p.rows; ++r) row_block<1>(p, r);
}

}  // namespace ssmv
