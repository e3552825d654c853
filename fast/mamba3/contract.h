// The precision contract of the bundled Mamba-3 step kernel (and of its twin, bit-identical), as a
// Mamba-3 StepContract (spec/mamba3/contract.h: plain data; like fast/ssu/contract.h, this depends
// on spec/ only). Listed as `ssmv.mamba3_step` by verify/family/mamba3/contracts.cpp.
#pragma once

#include "spec/mamba3/contract.h"

namespace ssmv::mamba3_step {

inline constexpr const char* kContractName = "ssmv.mamba3_step";

ssmv::mamba3::StepContract contract();

}  // namespace ssmv::mamba3_step
