#include "verify/judge/tensor_report.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "verify/judge/tensor_judge.h"

namespace ssmv::verify {

Verdict TensorReport::overall() const {
  for (Verdict v : {Verdict::invalid, Verdict::violation, Verdict::within_contract}) {
    if (count(v) > 0) return v;
  }
  return Verdict::exact;
}

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
const std::vector<std::string> kStateCoordNames{"sequence", "head", "dim", "state"};

std::vector<Bits> format_bits(Format f, const std::vector<float>& values) {
  std::vector<Bits> b(values.size());
  for (size_t i = 0; i < values.size(); ++i) b[i] = round_nearest_even(f, values[i]);
  return b;
}

TensorReport judge_tensor(const std::string& name, Format format, const std::vector<Bits>& computed,
                          const ref::ExactValues& exact, const std::vector<double>& bounds,
                          const Problem& problem, CoordFn coords,
                          std::vector<std::string> coord_names) {
  if (computed.size() != exact.size() || bounds.size() != exact.size()) {
    throw std::invalid_argument("judge_tensor '" + name + "': " + std::to_string(computed.size()) +
                                " computed values, " + std::to_string(exact.size()) +
                                " exact values and " + std::to_string(bounds.size()) +
                                " bounds must agree");
  }
  TensorJudge tj(name, format, int64_t(computed.size()), problem, coords, std::move(coord_names),
                    ElementDetail::elements);
  for (size_t i = 0; i < computed.size(); ++i) {
    tj.add(int64_t(i), computed[i], exact.rounded(format, i), exact.nearest[i], exact.certified_error[i],
              exact.magnitude[i], bounds[i], ref::HandedValue{exact.value[i].backend().data()});
  }
  return tj.finish();
}

}  // namespace ssmv::verify
