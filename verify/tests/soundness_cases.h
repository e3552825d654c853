// The soundness cases of the bounds, runnable on either device (soundness_cases.cpp).
// Each runs its family's random realistic problems through kernel_check and records a
// GoogleTest failure for every problem with a VIOLATION or INVALID element, and for every
// kind of tensor whose largest bound usage falls below its tightness floor.
#pragma once

#include "verify/run/kernel_check.h"

namespace ssmv::verify::soundness {

void ssu(Device device);
void chunk_scan(chunk_scan::ContractKind kind, Device device);
void handoff(Device device);

}  // namespace ssmv::verify::soundness
