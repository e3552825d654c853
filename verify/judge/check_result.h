// What judging one kernel's outputs produces — its name, contract, device and one
// TensorReport per judged tensor — whoever produced the outputs: a bundled kernel run by
// verify/run/kernel_check.h or an external kernel's dump judged by verify/judge/external_check.h.
#pragma once

#include <string>
#include <vector>

#include "verify/judge/tensor_report.h"

namespace ssmv::verify {

struct KernelCheck {
  std::string kernel;     // "ssu", "chunk_scan", "chunk_scan+ssu" (hand-off), an external name
  std::string contract;   // the contract's name
  std::string device;     // "twin", "gpu" or "external"
  std::vector<TensorReport> tensors;  // y first, then the states
  bool ok() const;
  Verdict overall() const;
};

}  // namespace ssmv::verify
