// The precision contract of the SSU kernel (and of its twin, which is bit-identical), as
// data for verify/ (spec/contract.h).
#pragma once

#include "spec/contract.h"

namespace ssmv::ssu {

Contract contract();

}  // namespace ssmv::ssu
