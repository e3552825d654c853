#include "verify/judge/check_result.h"

#include <algorithm>

namespace ssmv::verify {

bool KernelCheck::ok() const {
  return std::all_of(tensors.begin(), tensors.end(), [](const TensorReport& r) { return r.ok(); });
}

Verdict KernelCheck::overall() const {
  Verdict worst = Verdict::exact;
  for (const TensorReport& r : tensors) worst = std::max(worst, r.overall());
  return worst;
}

}  // namespace ssmv::verify
