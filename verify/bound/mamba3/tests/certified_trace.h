// The exact values the step bound needs (step_bound.h ExactTrace), from the certified Mamba-3
// reference run one token at a time — compute() on a sequence's first token, then decode() —
// and the reference's final four-part state, for the tests of the bound.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "reference/mamba3/reference.h"
#include "spec/mamba3/problem.h"
#include "verify/bound/mamba3/step_bound.h"

namespace ssmv::bound::mamba3::testing {

using ssmv::mamba3::Problem;

struct Certified {
  ExactTrace trace;
  // The exact final four-part state and y (nearest doubles of the certified values: hi + lo).
  std::vector<double> y, angle, S, B_prev, x_prev;
};

// |v| at most, from a certified value: |hi| + |lo| + 2^-64·magnitude (the certificate), rounded up.
inline double abs_upper(const ref::mamba3::CertifiedValues& v, size_t i) {
  return (std::fabs(v.hi[i]) + std::fabs(v.lo[i]) + std::ldexp(v.magnitude[i], -64)) * (1 + 0x1p-50);
}

// Token t of `pr` (sequence s) as a problem of one sequence of one token; the initial state of
// sequence s when `with_initial` (the first token of a sequence that has one).
inline Problem one_token(const Problem& pr, int64_t s, int64_t t, bool with_initial) {
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

inline Certified certified(const Problem& pr) {
  const auto& sh = pr.shape;
  const int64_t T = sh.num_tokens(), H = sh.H, P = sh.P, N = sh.N, R = sh.R, S = sh.num_sequences();
  Certified c;
  c.trace.angle.resize(size_t(T * H * R));
  c.trace.angle_error.resize(size_t(T * H * R));
  c.trace.S_abs.resize(size_t(T * H * P * N));
  c.trace.y_abs.resize(size_t(T * H * P));
  c.y.resize(size_t(T * H * P));
  c.angle.resize(size_t(S * H * R));
  c.S.resize(size_t(S * H * P * N));
  c.B_prev.resize(size_t(S * H * N));
  c.x_prev.resize(size_t(S * H * P));
  const auto copy = [](const ref::mamba3::CertifiedValues& v, int64_t n, double* value, double* abs) {
    for (int64_t i = 0; i < n; ++i) {
      if (value) value[i] = v.hi[size_t(i)] + v.lo[size_t(i)];
      if (abs) abs[i] = abs_upper(v, size_t(i));
    }
  };
  for (int64_t s = 0; s < S; ++s) {
    ref::mamba3::Result r;
    for (int64_t t = sh.cu_seqlens[size_t(s)]; t < sh.cu_seqlens[size_t(s + 1)]; ++t) {
      const bool first = t == sh.cu_seqlens[size_t(s)];
      const Problem one = one_token(pr, s, t, first && pr.has_initial_state());
      r = first ? ref::mamba3::compute(one) : ref::mamba3::decode(one, r.carried);
      copy(r.y, H * P, &c.y[size_t(t * H * P)], &c.trace.y_abs[size_t(t * H * P)]);
      copy(r.state, H * P * N, nullptr, &c.trace.S_abs[size_t(t * H * P * N)]);
      for (int64_t i = 0; i < H * R; ++i) {
        const size_t j = size_t(t * H * R + i);
        c.trace.angle[j] = r.angle_state.hi[size_t(i)] + r.angle_state.lo[size_t(i)];
        // The certificate (2^-64 of the magnitude) and the rounding of hi + lo (|θ| < 2π < 8: 2^-51).
        c.trace.angle_error[j] = std::ldexp(r.angle_state.magnitude[size_t(i)], -64) + 0x1p-50;
      }
    }
    copy(r.angle_state, H * R, &c.angle[size_t(s * H * R)], nullptr);
    copy(r.state, H * P * N, &c.S[size_t(s * H * P * N)], nullptr);
    copy(r.B_prev, H * N, &c.B_prev[size_t(s * H * N)], nullptr);
    copy(r.x_prev, H * P, &c.x_prev[size_t(s * H * P)], nullptr);
  }
  return c;
}

}  // namespace ssmv::bound::mamba3::testing
