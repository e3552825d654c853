#include "spec/rows_product.h"

#include <cstring>

#include "spec/vector_clones.h"

namespace ssmv {
namespace {

// Eight doubles: one AVX-512 register, two AVX2 registers, four SSE2 registers (GCC splits a
// generic vector to what the clone's target has).
using V8 = double __attribute__((vector_size(64)));

// (By reference: a vector returned by value from a function compiled without AVX changes the ABI.)
[[gnu::always_inline]] inline void load8(V8& v, const double* p) { std::memcpy(&v, p, sizeof v); }
[[gnu::always_inline]] inline void store8(double* p, const V8& v) { std::memcpy(p, &v, sizeof v); }

// R rows × 8 columns starting at column c: R accumulators of 8 columns in registers over the K
// terms.
template <int R>
[[gnu::always_inline]] inline void tile8(const Product<double, double, double>& p, int64_t r0, int64_t c) {
  V8 acc[R];
  for (int r = 0; r < R; ++r) {
    if (p.onto) {
      load8(acc[r], p.out + (r0 + r) * p.ldo + c);
    } else {
      acc[r] = V8{0, 0, 0, 0, 0, 0, 0, 0};
    }
  }
  const double* a = p.a + r0 * p.lda;
  for (int64_t k = 0; k < p.K; ++k) {
    V8 b;
    load8(b, p.b + k * p.ldb + c);
    for (int r = 0; r < R; ++r) acc[r] += a[r * p.lda + k] * b;
  }
  for (int r = 0; r < R; ++r) store8(p.out + (r0 + r) * p.ldo + c, acc[r]);
}

// R rows, every column: tiles of 8, then the last cols mod 8 one by one.
template <int R>
[[gnu::always_inline]] inline void row_block(const Product<double, double, double>& p, int64_t r0) {
  int64_t c = 0;
  for (; c + 8 <= p.cols; c += 8) tile8<R>(p, r0, c);
  for (; c < p.cols; ++c) {
    for (int r = 0; r < R; ++r) {
      double acc = p.onto ? p.out[(r0 + r) * p.ldo + c] : 0.0;
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
