#include "verify/judge/problem_slice.h"

#include <stdexcept>

namespace ssmv::verify {

Problem slice_tokens(const Problem& p, const std::vector<int64_t>& begin,
                     const std::vector<int64_t>& end, std::vector<int64_t>* kept) {
  const Shape& s = p.shape;
  const int64_t S = s.num_sequences(), H = s.H, P = s.P, G = s.G, N = s.N;
  if (int64_t(begin.size()) != S || int64_t(end.size()) != S) {
    throw std::invalid_argument("slice_tokens: one range per sequence is needed");
  }
  Problem out;
  out.shape = Shape{{0}, H, P, N, G};
  out.formats = p.formats;
  out.dt_softplus = p.dt_softplus;
  out.dt_limit_lo = p.dt_limit_lo;
  out.dt_limit_hi = p.dt_limit_hi;
  out.A = p.A;
  out.dt_bias = p.dt_bias;
  out.D = p.D;
  bool all_start_at_zero = true;
  for (int64_t q = 0; q < S; ++q) {
    if (begin[q] < 0 || begin[q] > end[q] || end[q] > s.seq_len(q)) {
      throw std::invalid_argument("slice_tokens: range [" + std::to_string(begin[q]) + ", " +
                                  std::to_string(end[q]) + ") of sequence " + std::to_string(q) +
                                  " (length " + std::to_string(s.seq_len(q)) + ") is invalid");
    }
    if (begin[q] == end[q]) continue;
    if (kept) kept->push_back(q);
    all_start_at_zero = all_start_at_zero && begin[q] == 0;
    out.shape.cu_seqlens.push_back(out.shape.cu_seqlens.back() + end[q] - begin[q]);
    for (int64_t t = s.cu_seqlens[q] + begin[q]; t < s.cu_seqlens[q] + end[q]; ++t) {
      // Narrowed tensors stay narrowed (a dump's bf16 x is sliced as bits).
      const auto copy = [&](FormatValues& dst, const FormatValues& src, int64_t width) {
        if (!src.empty()) dst.append(src, size_t(t * width), size_t(width));
      };
      copy(out.x, p.x, H * P);
      copy(out.z, p.z, H * P);
      copy(out.dt, p.dt, H);
      copy(out.B, p.B, G * N);
      copy(out.C, p.C, G * N);
    }
    if (p.has_initial_state() && begin[q] == 0) {
      const int64_t per = H * P * N;
      out.initial_state.insert(out.initial_state.end(), p.initial_state.begin() + q * per,
                               p.initial_state.begin() + (q + 1) * per);
    }
  }
  if (!all_start_at_zero) out.initial_state.clear();
  return out;
}

}  // namespace ssmv::verify
