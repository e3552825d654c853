// Bytes of one stored element of a format: 4 for fp32, 2 for bf16 and fp16 and for
// int16_scaled's codes (its per-row decode scales are a separate fp32 tensor). The one
// definition that the kernels, their launchers, the host twins' packing and the benchmarks use.
#pragma once

#include "fast/common/hd.h"
#include "spec/format.h"

namespace ssmv {

SSMV_HD constexpr int storage_bytes(Format f) { return f == Format::fp32 ? 4 : 2; }

}  // namespace ssmv
