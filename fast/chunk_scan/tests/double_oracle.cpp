#include "fast/chunk_scan/tests/double_oracle.h"

#include <cmath>

namespace ssmv::chunk_scan::testing {

DoubleResult run_double(const Problem& pr, const ChunkPlan& plan) {
  const Shape& sh = pr.shape;
  const int64_t T = sh.num_tokens(), H = sh.H, P = sh.P, N = sh.N, S = sh.num_sequences();
  DoubleResult r;
  r.y.assign(T * H * P, 0);
  r.y_mag.assign(T * H * P, 0);
  r.final_state.assign(S * H * P * N, 0);
  r.final_mag.assign(S * H * P * N, 0);
  r.boundary.assign(plan.num_chunks() * H * P * N, 0);
  r.boundary_mag.assign(plan.num_chunks() * H * P * N, 0);
  r.delta.assign(T * H, 0);
  r.delta_abs_err.assign(T * H, 0);
  const double u = 0x1p-24;
  std::vector<double> st(P * N), sabs(P * N);
  for (int64_t s = 0; s < S; ++s) {
    for (int64_t h = 0; h < H; ++h) {
      const int64_t g = sh.group_of(h);
      for (int64_t e = 0; e < P * N; ++e) {
        st[e] = pr.has_initial_state() ? pr.initial_state[(s * H + h) * P * N + e] : 0.0;
        sabs[e] = std::fabs(st[e]);
      }
      for (int64_t t = sh.cu_seqlens[s]; t < sh.cu_seqlens[s + 1]; ++t) {
        double v = double(pr.dt[t * H + h]) + (pr.has_dt_bias() ? double(pr.dt_bias[h]) : 0.0);
        double d = v, err = pr.has_dt_bias() ? u * std::fabs(v) : 0.0;  // fp32 add
        if (pr.dt_softplus) {
          d = v > 30 ? v + std::log1p(std::exp(-v)) : std::log1p(std::exp(v));
          // softplus' = σ(v) ≤ 1 carries the add's error; softplus itself ≤ 1.46 ULP ≤ 2.92u.
          err = err / (1.0 + std::exp(-v)) + 2.92 * u * d;
        }
        d = std::min(std::max(d, double(pr.dt_limit_lo)), double(pr.dt_limit_hi));
        r.delta[t * H + h] = d;
        r.delta_abs_err[t * H + h] = err;
        const double a = std::exp(d * double(pr.A[h]));
        for (int64_t p = 0; p < P; ++p) {
          const double x = pr.x[pr.x_index(t, h, p)];
          double y = 0, mag = 0;
          for (int64_t n = 0; n < N; ++n) {
            const double b = d * double(pr.B[pr.bc_index(t, g, n)]);
            const double c = pr.C[pr.bc_index(t, g, n)];
            st[p * N + n] = a * st[p * N + n] + b * x;
            sabs[p * N + n] = a * sabs[p * N + n] + std::fabs(b * x);
            y += c * st[p * N + n];
            mag += std::fabs(c) * sabs[p * N + n];
          }
          const double dx = double(pr.d_value(h, p)) * x;
          y += dx;
          mag += std::fabs(dx);
          if (pr.has_z()) {
            const double z = pr.z[pr.x_index(t, h, p)];
            const double gate = z / (1.0 + std::exp(-z));
            y *= gate;
            mag *= std::fabs(gate);
          }
          r.y[pr.x_index(t, h, p)] = y;
          r.y_mag[pr.x_index(t, h, p)] = mag;
        }
        // State after a chunk that ends at token t + 1.
        for (int64_t c = plan.first_chunk[s]; c < plan.first_chunk[s + 1]; ++c) {
          if (plan.start[c] + plan.len[c] != t + 1) continue;
          for (int64_t e = 0; e < P * N; ++e) {
            r.boundary[(c * H + h) * P * N + e] = st[e];
            r.boundary_mag[(c * H + h) * P * N + e] = sabs[e];
          }
        }
      }
      for (int64_t e = 0; e < P * N; ++e) {
        r.final_state[(s * H + h) * P * N + e] = st[e];
        r.final_mag[(s * H + h) * P * N + e] = sabs[e];
      }
    }
  }
  return r;
}

}  // namespace ssmv::chunk_scan::testing
