#include "reference/row_sums.h"

#include <cstring>

#include "reference/double_double.h"
#include "spec/vector_clones.h"

namespace ssmv::ref {

SSMV_VECTOR_CLONES
void weighted_row_sums(const double* __restrict a, const double* __restrict rows, int64_t P, int64_t N,
                       double* __restrict out) {
  using dd::V4;
  using I4 = int64_t __attribute__((vector_size(32)));
  int64_t p = 0;
  for (; p + 4 <= P; p += 4) {
    const double *e0 = rows + p * N, *e1 = e0 + N, *e2 = e1 + N, *e3 = e2 + N;
    V4 acc{};
    int64_t n = 0;
    // Four n at a time: the 4 × 4 block of the rows transposed in registers, so that column n
    // holds the four rows' elements n; then the four columns added in the order of n.
    for (; n + 4 <= N; n += 4) {
      V4 r0, r1, r2, r3;
      std::memcpy(&r0, e0 + n, sizeof r0);
      std::memcpy(&r1, e1 + n, sizeof r1);
      std::memcpy(&r2, e2 + n, sizeof r2);
      std::memcpy(&r3, e3 + n, sizeof r3);
      const V4 t0 = __builtin_shuffle(r0, r1, I4{0, 4, 2, 6}), t1 = __builtin_shuffle(r0, r1, I4{1, 5, 3, 7});
      const V4 t2 = __builtin_shuffle(r2, r3, I4{0, 4, 2, 6}), t3 = __builtin_shuffle(r2, r3, I4{1, 5, 3, 7});
      const V4 c0 = __builtin_shuffle(t0, t2, I4{0, 1, 4, 5}), c1 = __builtin_shuffle(t1, t3, I4{0, 1, 4, 5});
      const V4 c2 = __builtin_shuffle(t0, t2, I4{2, 3, 6, 7}), c3 = __builtin_shuffle(t1, t3, I4{2, 3, 6, 7});
      acc += a[n] * c0;
      acc += a[n + 1] * c1;
      acc += a[n + 2] * c2;
      acc += a[n + 3] * c3;
    }
    for (; n < N; ++n) acc += a[n] * V4{e0[n], e1[n], e2[n], e3[n]};
    for (int k = 0; k < 4; ++k) out[p + k] = acc[k];
  }
  for (; p < P; ++p) {
    double acc = 0;
    for (int64_t n = 0; n < N; ++n) acc += a[n] * rows[p * N + n];
    out[p] = acc;
  }
}

}  // namespace ssmv::ref
