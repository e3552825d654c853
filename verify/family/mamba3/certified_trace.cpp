#include "verify/family/mamba3/certified_trace.h"

#include <atomic>
#include <cmath>
#include <stdexcept>
#include <string>

#include "spec/parallel.h"

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

JudgedExact exact_near(Format f, float computed, const CertifiedValues& exact, size_t k, bool circular) {
  // 2π as a double-double (hi = RN(2π)).
  constexpr double kTwoPiHi = 6.283185307179586, kTwoPiLo = 2.4492935982947064e-16;
  JudgedExact e{exact.hi[k], exact.lo[k], certified_error(exact, k), exact.rounded(f, k)};
  if (circular && std::isfinite(computed)) {
    const double turns = std::nearbyint((double(computed) - e.hi) / kTwoPiHi);
    if (turns != 0) {
      // hi + lo + turns·2π in double-double: TwoSum of the leading parts, the rest in lo; the
      // error of this sum (below 2^-100 for |turns| ≤ 2^20 of a value below 2^24) is charged.
      const double a = e.hi, b = turns * kTwoPiHi, sum = a + b, bb = sum - a, err = (a - (sum - bb)) + (b - bb);
      const double rest = err + e.lo + turns * kTwoPiLo;
      e.hi = sum + rest;
      e.lo = (sum - e.hi) + rest;
      e.error += std::ldexp(std::fabs(e.hi), -90);
      e.rounded = round_nearest_even(f, e.hi);
    }
  }
  return e;
}

ssmv::mamba3::FourPartState pair_state(const Problem& pr, const ssmv::mamba3::FourPartState& state, int64_t s,
                                       int64_t h) {
  const int64_t P = pr.shape.P, N = pr.shape.N, R = pr.shape.R;
  const auto part = [](const std::vector<float>& v, int64_t from, int64_t count) {
    return v.empty() ? std::vector<float>{} : std::vector<float>(v.begin() + from, v.begin() + from + count);
  };
  return {part(state.angle, pr.angle_state_index(s, h, 0), R), part(state.S, pr.state_index(s, h, 0, 0), P * N),
          part(state.B_prev, pr.b_prev_index(s, h, 0), N), part(state.x_prev, pr.x_prev_index(s, h, 0), P)};
}

Problem pair_tokens(const Problem& pr, int64_t s, int64_t h, int64_t first, int64_t count, bool with_initial) {
  const auto& sh = pr.shape;
  const int64_t P = sh.P, N = sh.N, R = sh.R, g = sh.group_of(h);
  Problem o;
  o.shape = ssmv::mamba3::Shape{{0, count}, 1, P, N, 1, R};
  o.formats = pr.formats;
  // Tokens [first, first + count) of a token tensor: `width` values from `offset` in each row of `stride`.
  const auto rows = [&](const std::vector<float>& v, int64_t stride, int64_t offset, int64_t width) {
    std::vector<float> out;
    out.reserve(size_t(count * width));
    for (int64_t t = first; t < first + count; ++t) {
      out.insert(out.end(), v.begin() + t * stride + offset, v.begin() + t * stride + offset + width);
    }
    return out;
  };
  o.x = rows(pr.x, sh.H * P, h * P, P);
  o.B = rows(pr.B, sh.G * N, g * N, N);
  o.C = rows(pr.C, sh.G * N, g * N, N);
  o.dt = rows(pr.dt, sh.H, h, 1);
  o.adt = rows(pr.adt, sh.H, h, 1);
  o.trap = rows(pr.trap, sh.H, h, 1);
  o.angles = rows(pr.angles, sh.H * R, h * R, R);
  o.B_bias = std::vector<float>(pr.B_bias.begin() + pr.bias_index(h, 0), pr.B_bias.begin() + pr.bias_index(h, N));
  o.C_bias = std::vector<float>(pr.C_bias.begin() + pr.bias_index(h, 0), pr.C_bias.begin() + pr.bias_index(h, N));
  if (pr.has_D()) o.D = {pr.D[size_t(h)]};
  if (pr.has_z()) o.z = rows(pr.z, sh.H * P, h * P, P);
  if (with_initial && pr.has_initial_state()) o.initial = pair_state(pr, pr.initial, s, h);
  return o;
}

Problem pair_problem(const Problem& pr, int64_t s, int64_t h) {
  return pair_tokens(pr, s, h, pr.shape.cu_seqlens[size_t(s)], pr.shape.seq_len(s), true);
}

CertifiedRun certified_run(const Problem& pr, int threads, int64_t chunk) {
  if (chunk < 1) throw std::invalid_argument("certified_run: chunk must be >= 1, got " + std::to_string(chunk));
  return certified_run(pr, threads, bound::mamba3::TraceGrid{chunk, 0});
}

CertifiedRun certified_run(const Problem& pr, int threads, const bound::mamba3::TraceGrid& grid) {
  ssmv::mamba3::validate(pr);
  const auto& sh = pr.shape;
  const int64_t T = sh.num_tokens(), H = sh.H, P = sh.P, N = sh.N, R = sh.R, S = sh.num_sequences();
  CertifiedRun c;
  c.trace.angle.resize(size_t(T * H * R));
  c.trace.angle_error.resize(size_t(T * H * R));
  if (grid.chunk < 1 || grid.chunked < 0) {
    throw std::invalid_argument("certified_run: the trace's grid needs chunk >= 1 and chunked >= 0, got " +
                                std::to_string(grid.chunk) + " and " + std::to_string(grid.chunked));
  }
  c.trace.S_abs.resize(size_t(bound::mamba3::kept_tokens(sh, grid) * H * P * N));
  c.trace.y_abs.resize(size_t(T * H * P));
  c.y.resize(size_t(T * H * P));
  c.angle.resize(size_t(S * H * R));
  c.S.resize(size_t(S * H * P * N));
  c.B_prev.resize(size_t(S * H * N));
  c.x_prev.resize(size_t(S * H * P));
  std::atomic<int> check_bits{0};
  // One task per (sequence, head) pair: the pairs are independent and each writes its own
  // elements, so the values are the same for any thread count.
  for_each_task(S * H, resolve_threads(threads), [&](int64_t task, int64_t) {
    const int64_t s = task / H, h = task % H;
    ref::mamba3::Result r;
    ref::mamba3::CarriedState carried;
    for (int64_t t = sh.cu_seqlens[size_t(s)]; t < sh.cu_seqlens[size_t(s + 1)]; ++t) {
      const bool first = t == sh.cu_seqlens[size_t(s)];
      const int64_t local = t - sh.cu_seqlens[size_t(s)], length = sh.seq_len(s);
      const Problem one = pair_tokens(pr, s, h, t, 1, first);
      // The state certified where the trace keeps |S| (and after the last token, the returned
      // state); elsewhere y and the angle alone, the carried state advanced in place.
      ref::mamba3::Options options;
      options.certify_state = grid.keeps(local, length) || local + 1 == length;
      if (first) {
        r = ref::mamba3::compute(one, options);
        carried = std::move(r.carried);
      } else {
        r = ref::mamba3::advance(one, carried, options);
      }
      check_bits = r.check_precision_bits;
      copy_into(c.y, size_t(pr.x_index(t, h, 0)), r.y);
      for (int64_t p = 0; p < P; ++p) c.trace.y_abs[size_t(pr.x_index(t, h, p))] = abs_upper(r.y, size_t(p));
      if (grid.keeps(local, length)) {  // a chunk's last token, or a decode step
        const int64_t end = bound::mamba3::first_kept(sh, s, grid) + grid.row(local, length);
        const size_t s0 = size_t((end * H + h) * P * N);
        for (int64_t i = 0; i < P * N; ++i) c.trace.S_abs[s0 + size_t(i)] = abs_upper(r.state, size_t(i));
      }
      for (int64_t i = 0; i < R; ++i) {
        const size_t j = size_t(pr.angle_index(t, h, i));
        c.trace.angle[j] = r.angle_state.hi[size_t(i)] + r.angle_state.lo[size_t(i)];
        // The certificate and the rounding of hi + lo to a double (|θ| < 2π < 8: 2^-51).
        c.trace.angle_error[j] = certified_error(r.angle_state, size_t(i)) + 0x1p-50;
      }
    }
    copy_into(c.angle, size_t(pr.angle_state_index(s, h, 0)), r.angle_state);
    copy_into(c.S, size_t(pr.state_index(s, h, 0, 0)), r.state);
    copy_into(c.B_prev, size_t(pr.b_prev_index(s, h, 0)), r.B_prev);
    copy_into(c.x_prev, size_t(pr.x_prev_index(s, h, 0)), r.x_prev);
  });
  c.check_precision_bits = check_bits;
  return c;
}

}  // namespace ssmv::family::mamba3
