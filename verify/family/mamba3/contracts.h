// Mamba-3 SISO's contracts by name (the presets of verify/bound/mamba3/step_contract.h and
// prefill_contract.h, the bundled kernel's fast/mamba3/contract.h): what
// `--contract` / `--decode-contract` resolve (a preset or a contract file, contract_file.h), what
// `ssmv contract list` / `show` print of the presets (Family::contract_presets) and which of them a
// host emulation implements (`ssmv bounds` measures it there).
#pragma once

#include <string>
#include <vector>

#include "spec/mamba3/contract.h"
#include "verify/family/family.h"

namespace ssmv::family::mamba3 {

// A preset of the kernel, or a contract file of its family (contract_file.h). Throws cli::UsageError
// naming the expected presets for anything else (a file of the other kernel's family named so), and
// what reading the file throws.
ssmv::mamba3::StepContract step_contract(const std::string& name);
ssmv::mamba3::PrefillContract prefill_contract(const std::string& name);

// The step kernel's presets (mamba3_siso_step.*, ssmv.mamba3_step): true; the prefill's
// (mamba3_siso_combined.*): false.
bool is_step_contract(const std::string& name);
// The presets a host emulation implements (*.host_emulation): the emulation runs the contract's
// rounding points with the C++ library's functions, whose budgets the contract declares.
bool is_host_contract(const std::string& name);

// The six presets: step production, host_emulation and the bundled kernel's (ssmv.mamba3_step,
// fast/mamba3/contract.h); prefill production, fp32_angles and host_emulation; each with its
// one-line description and, for `ssmv contract show`, the JSON of its contract file
// (contract_file.h: save, edit, give to `ssmv check --contract FILE`).
std::vector<ContractPreset> contract_presets();

}  // namespace ssmv::family::mamba3
