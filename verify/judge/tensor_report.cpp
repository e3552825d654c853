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

std::vector<Bits> format_bits(Format f, const std::vector<float>& values) {
  std::vector<Bits> b(values.size());
  for (size_t i = 0; i < values.size(); ++i) b[i] = round_nearest_even(f, values[i]);
  return b;
}

TensorReport judge_tensor(const std::string& name, Format format, const std::vector<Bits>& computed,
                          const ref::ExactValues& exact, const std::vector<double>& bounds, TensorLayout layout) {
  if (computed.size() != exact.size() || bounds.size() != exact.size()) {
    throw std::invalid_argument("judge_tensor '" + name + "': " + std::to_string(computed.size()) +
                                " computed values, " + std::to_string(exact.size()) +
                                " exact values and " + std::to_string(bounds.size()) +
                                " bounds must agree");
  }
  TensorJudge tj(name, format, int64_t(computed.size()), std::move(layout), ElementDetail::elements);
  for (size_t i = 0; i < computed.size(); ++i) {
    tj.add(int64_t(i), computed[i], exact.rounded(format, i), exact.nearest[i], exact.certified_error[i],
              exact.magnitude[i], bounds[i], ref::HandedValue{exact.value[i].backend().data()});
  }
  return tj.finish();
}

}  // namespace ssmv::verify
