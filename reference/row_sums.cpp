#include "reference/row_sums.h"

#include "reference/double_double.h"
#include "spec/vector_clones.h"

namespace ssmv::ref {

SSMV_VECTOR_CLONES
void weighted_row_sums(const double* __restrict a, const double* __restrict rows, int64_t P, int64_t N,
                       double* __restrict out) {
  int64_t p = 0;
  for (; p + 4 <= P; p += 4) {
    const double *e0 = rows + p * N, *e1 = e0 + N, *e2 = e1 + N, *e3 = e2 + N;
    dd::V4 acc{};
    for (int64_t n = 0; n < N; ++n) acc += a[n] * dd::V4{e0[n], e1[n], e2[n], e3[n]};
    for (int k = 0; k < 4; ++k) out[p + k] = acc[k];
  }
  for (; p < P; ++p) {
    double acc = 0;
    for (int64_t n = 0; n < N; ++n) acc += a[n] * rows[p * N + n];
    out[p] = acc;
  }
}

}  // namespace ssmv::ref
