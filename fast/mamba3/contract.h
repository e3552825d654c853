// The precision contract of the bundled Mamba-3 step kernel (and of its twin, bit-identical), as a
// Mamba-3 StepContract (verify/bound/mamba3/step_contract.h: a plain struct of spec/ types, read
// here as data; this library links no verify/ code). Listed as `ssmv.mamba3_step` by
// verify/family/mamba3/contracts.cpp.
#pragma once

#include "verify/bound/mamba3/step_contract.h"

namespace ssmv::mamba3_step {

inline constexpr const char* kContractName = "ssmv.mamba3_step";

bound::mamba3::StepContract contract();

}  // namespace ssmv::mamba3_step
