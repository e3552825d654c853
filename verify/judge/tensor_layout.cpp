#include "verify/judge/tensor_layout.h"

#include <algorithm>

namespace ssmv::verify {

std::vector<int64_t> y_coords(const Problem& p, int64_t index) {
  const Shape& s = p.shape;
  const int64_t dim = index % s.P, head = (index / s.P) % s.H, t = index / (s.P * s.H);
  const auto it = std::upper_bound(s.cu_seqlens.begin(), s.cu_seqlens.end(), t);
  const int64_t seq = int64_t(it - s.cu_seqlens.begin()) - 1;
  return {seq, t - s.cu_seqlens[seq], head, dim};
}

std::vector<int64_t> state_coords(const Problem& p, int64_t index) {
  const Shape& s = p.shape;
  return {index / (s.H * s.P * s.N), (index / (s.P * s.N)) % s.H, (index / s.N) % s.P, index % s.N};
}

const std::vector<std::string> kYCoordNames{"sequence", "token", "head", "dim"};

TensorLayout y_layout(const Problem& p) {
  const Shape& s = p.shape;
  const int64_t elements = s.num_tokens() * s.H * s.P;
  TensorLayout l;
  l.coord_names = kYCoordNames;
  l.dims = s.H * s.P > 0 ? std::vector<int64_t>{elements / (s.H * s.P), s.H, s.P} : std::vector<int64_t>{elements};
  l.coords = [&p](int64_t index) { return y_coords(p, index); };
  return l;
}

TensorLayout state_layout(const Problem& p, int64_t elements, const std::string& first) {
  const Shape& s = p.shape;
  const int64_t per = s.H * s.P * s.N;
  TensorLayout l;
  l.coord_names = {first, "head", "dim", "state"};
  l.dims = per > 0 ? std::vector<int64_t>{elements / per, s.H, s.P, s.N} : std::vector<int64_t>{elements};
  l.coords = [&p](int64_t index) { return state_coords(p, index); };
  return l;
}

}  // namespace ssmv::verify
