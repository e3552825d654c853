#include "verify/family/mamba3/certified_trace.h"

#include <cmath>

namespace ssmv::family::mamba3 {
namespace {

using ssmv::mamba3::Problem;
using ref::mamba3::CertifiedValues;

// dst[offset + i] = src[i] for i < src.size(), every field.
void copy_into(CertifiedValues& dst, size_t offset, const CertifiedValues& src) {
  for (size_t i = 0; i < src.size(); ++i) {
    dst.hi[offset + i] = src.hi[i];
    dst.lo[offset + i] = src.lo[i];
    dst.magnitude[offset + i] = src.magnitude[i];
    dst.fp32[offset + i] = src.fp32[i];
    dst.bf16[offset + i] = src.bf16[i];
    dst.fp16[offset + i] = src.fp16[i];
  }
}

}  // namespace

double certified_error(const CertifiedValues& v, size_t i) {
  return std::ldexp(v.magnitude[i], -ref::kCertifiedBits) * (1 + 0x1p-50);
}

double abs_upper(const CertifiedValues& v, size_t i) {
  return (std::fabs(v.hi[i]) + std::fabs(v.lo[i]) + certified_error(v, i)) * (1 + 0x1p-50);
}

Problem one_token(const Problem& pr, int64_t s, int64_t t, bool with_initial) {
  const auto& sh = pr.shape;
  const int64_t H = sh.H, P = sh.P, N = sh.N, G = sh.G, R = sh.R;
  Problem o;
  o.shape = ssmv::mamba3::Shape{{0, 1}, H, P, N, G, R};
  o.formats = pr.formats;
  const auto rows = [](const std::vector<float>& v, int64_t from, int64_t row) {
    return std::vector<float>(v.begin() + from * row, v.begin() + (from + 1) * row);
  };
  o.x = rows(pr.x, t, H * P);
  o.B = rows(pr.B, t, G * N);
  o.C = rows(pr.C, t, G * N);
  o.dt = rows(pr.dt, t, H);
  o.adt = rows(pr.adt, t, H);
  o.trap = rows(pr.trap, t, H);
  o.angles = rows(pr.angles, t, H * R);
  o.B_bias = pr.B_bias;
  o.C_bias = pr.C_bias;
  o.D = pr.D;
  if (pr.has_z()) o.z = rows(pr.z, t, H * P);
  if (with_initial) {
    o.initial.angle = rows(pr.initial.angle, s, H * R);
    o.initial.S = rows(pr.initial.S, s, H * P * N);
    o.initial.B_prev = rows(pr.initial.B_prev, s, H * N);
    o.initial.x_prev = rows(pr.initial.x_prev, s, H * P);
  }
  return o;
}

CertifiedRun certified_run(const Problem& pr) {
  ssmv::mamba3::validate(pr);
  const auto& sh = pr.shape;
  const int64_t T = sh.num_tokens(), H = sh.H, P = sh.P, N = sh.N, R = sh.R, S = sh.num_sequences();
  CertifiedRun c;
  c.trace.angle.resize(size_t(T * H * R));
  c.trace.angle_error.resize(size_t(T * H * R));
  c.trace.S_abs.resize(size_t(T * H * P * N));
  c.trace.y_abs.resize(size_t(T * H * P));
  c.y.resize(size_t(T * H * P));
  c.angle.resize(size_t(S * H * R));
  c.S.resize(size_t(S * H * P * N));
  c.B_prev.resize(size_t(S * H * N));
  c.x_prev.resize(size_t(S * H * P));
  for (int64_t s = 0; s < S; ++s) {
    ref::mamba3::Result r;
    for (int64_t t = sh.cu_seqlens[size_t(s)]; t < sh.cu_seqlens[size_t(s + 1)]; ++t) {
      const bool first = t == sh.cu_seqlens[size_t(s)];
      const Problem one = one_token(pr, s, t, first && pr.has_initial_state());
      r = first ? ref::mamba3::compute(one) : ref::mamba3::decode(one, r.carried);
      c.check_precision_bits = r.check_precision_bits;
      copy_into(c.y, size_t(t * H * P), r.y);
      for (int64_t i = 0; i < H * P; ++i) c.trace.y_abs[size_t(t * H * P + i)] = abs_upper(r.y, size_t(i));
      for (int64_t i = 0; i < H * P * N; ++i) c.trace.S_abs[size_t(t * H * P * N + i)] = abs_upper(r.state, size_t(i));
      for (int64_t i = 0; i < H * R; ++i) {
        const size_t j = size_t(t * H * R + i);
        c.trace.angle[j] = r.angle_state.hi[size_t(i)] + r.angle_state.lo[size_t(i)];
        // The certificate and the rounding of hi + lo to a double (|θ| < 2π < 8: 2^-51).
        c.trace.angle_error[j] = certified_error(r.angle_state, size_t(i)) + 0x1p-50;
      }
    }
    copy_into(c.angle, size_t(s * H * R), r.angle_state);
    copy_into(c.S, size_t(s * H * P * N), r.state);
    copy_into(c.B_prev, size_t(s * H * N), r.B_prev);
    copy_into(c.x_prev, size_t(s * H * P), r.x_prev);
  }
  return c;
}

}  // namespace ssmv::family::mamba3
