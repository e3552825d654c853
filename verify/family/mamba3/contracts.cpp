#include "verify/family/mamba3/contracts.h"

#include <filesystem>

#include "fast/mamba3/contract.h"
#include "verify/bound/mamba3/prefill_contract.h"
#include "verify/bound/mamba3/step_contract.h"
#include "verify/cli/usage_error.h"
#include "verify/family/mamba3/contract_file.h"

namespace ssmv::family::mamba3 {
namespace {

using ssmv::mamba3::PrefillContract;
using ssmv::mamba3::StepContract;

constexpr const char* kStepProduction = "mamba3_siso_step.production";
constexpr const char* kStepHost = "mamba3_siso_step.host_emulation";
constexpr const char* kPrefillProduction = "mamba3_siso_combined.production";
constexpr const char* kPrefillFp32Angles = "mamba3_siso_combined.fp32_angles";
constexpr const char* kPrefillHost = "mamba3_siso_combined.host_emulation";

// A name that is not a preset is a contract file's path (contract_file.h), whose family must be the
// kernel's.
bool is_file(const std::string& name) { return std::filesystem::is_regular_file(name); }

}  // namespace

StepContract step_contract(const std::string& name) {
  if (name == kStepProduction) return bound::mamba3::production_h200();
  if (name == kStepHost) return bound::mamba3::host_emulation();
  if (name == mamba3_step::kContractName) return mamba3_step::contract();
  if (is_file(name)) {
    if (contract_file_family(name) != "mamba3_step") {
      throw cli::UsageError("contract file '" + name + "' is a prefill's (family mamba3_prefill): the step kernel needs "
                            "a mamba3_step contract");
    }
    return read_step_contract(name);
  }
  throw cli::UsageError("contract '" + name + "' is not a Mamba-3 step contract: expected mamba3_siso_step.production, "
                        "mamba3_siso_step.host_emulation, ssmv.mamba3_step or a Mamba-3 contract file "
                        "(docs/contracts.md)");
}

PrefillContract prefill_contract(const std::string& name) {
  if (name == kPrefillProduction) return bound::mamba3::prefill_production_h200();
  if (name == kPrefillFp32Angles) return bound::mamba3::prefill_fp32_angles();
  if (name == kPrefillHost) return bound::mamba3::prefill_host_emulation();
  if (is_file(name)) {
    if (contract_file_family(name) != "mamba3_prefill") {
      throw cli::UsageError("contract file '" + name + "' is a step kernel's (family mamba3_step): the prefill needs "
                            "a mamba3_prefill contract");
    }
    return read_prefill_contract(name);
  }
  throw cli::UsageError("contract '" + name + "' is not a Mamba-3 prefill contract: expected "
                        "mamba3_siso_combined.production, mamba3_siso_combined.fp32_angles, "
                        "mamba3_siso_combined.host_emulation or a Mamba-3 contract file (docs/contracts.md)");
}

bool is_step_contract(const std::string& name) {
  return name == kStepProduction || name == kStepHost || name == mamba3_step::kContractName;
}

bool is_host_contract(const std::string& name) { return name == kStepHost || name == kPrefillHost; }

std::vector<ContractPreset> contract_presets() {
  return {
      {kStepProduction, "mamba3_step",
       "mamba_ssm's Mamba-3 SISO decode step (mamba3_siso_step) on an H200, Triton 3.6: C·S on bf16 "
       "operands (tensor cores), the angle state in fp32; tanh/cos/sin measured on the H200, exp/sigmoid/silu from "
       "docs/measurements/triton-budgets.md (exp for adt <= 0 only), div.full.f32",
       json::dump(step_contract_to_json(bound::mamba3::production_h200()), 2)},
      {kStepHost, "mamba3_step",
       "the step's host emulation (verify/bound/mamba3/step_emulation.h): bf16 C·S operands summed in "
       "fp32, the C++ library's fp32 tanh/cos/sin/exp2 (budgets derived and checked by emulation_budget_test), IEEE "
       "division",
       json::dump(step_contract_to_json(bound::mamba3::host_emulation()), 2)},
      {mamba3_step::kContractName, "mamba3_step",
       "ssmv's bundled Mamba-3 step kernel and its bit-identical host twin (fast/mamba3/): C·S an fp32 FMA chain "
       "on fp32 operands, no tensor cores; tanh/cos/sin/exp/sigmoid/silu from fast/common/fast_math.h (measured "
       "against MPFR, fast_math_budgets.h), IEEE division",
       json::dump(step_contract_to_json(mamba3_step::contract()), 2)},
      {kPrefillProduction, "mamba3_prefill",
       "mamba_ssm's chunked prefill (mamba3_siso_combined) on an H200, Triton 3.6, as shipped: θ "
       "stored in bf16, bf16 Q/K stores and dot operands (tensor cores), the q·k diagonal on a tf32 mma; "
       "tanh/cos/sin/exp2 measured on the H200, sigmoid/silu from triton-budgets.md",
       json::dump(prefill_contract_to_json(bound::mamba3::prefill_production_h200()), 2)},
      {kPrefillFp32Angles, "mamba3_prefill",
       "the production prefill's contract with θ kept in fp32 (as the step kernel keeps it); "
       "mamba_ssm's prefill as shipped stores θ in bf16 and may exceed it",
       json::dump(prefill_contract_to_json(bound::mamba3::prefill_fp32_angles()), 2)},
      {kPrefillHost, "mamba3_prefill",
       "the prefill's host emulation (verify/bound/mamba3/prefill_emulation.h): θ, Q/K stores and "
       "dot operands in bf16, fp32 sums, the diagonal in fp32 (no tf32), the C++ library's fp32 functions",
       json::dump(prefill_contract_to_json(bound::mamba3::prefill_host_emulation()), 2)},
  };
}

}  // namespace ssmv::family::mamba3
