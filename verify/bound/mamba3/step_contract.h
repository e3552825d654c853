// The contract presets of mamba_ssm's Mamba-3 SISO decode step kernel (Triton
// mamba3_siso_step_kernel, mamba_ssm/ops/triton/mamba3/mamba3_siso_step.py at e9594ce1c732) and of
// its host emulation (step_emulation.h): StepContracts (spec/mamba3/contract.h) with the budgets
// measured or derived for each. The bound that reads them: step_bound.h; the derivation and where
// every default comes from: docs/mamba3-bounds.md.
#pragma once

#include "spec/mamba3/contract.h"

namespace ssmv::bound::mamba3 {

// The kernel on an H200 as Triton 3.6 compiles it: cos/sin/tanh through the PTX approximations
// (their PTX ISA error figures, not measured by ssmv), exp, sigmoid and silu as measured in
// docs/measurements/triton-budgets.md (exp only for adt <= 0: the bound refuses adt > 0 under
// this contract), division div.full.f32.
ssmv::mamba3::StepContract production_h200();

// The host emulation (step_emulation.h): every transcendental through the C++ library's fp32
// functions (std::tanh, std::cos, std::sin, std::exp2 on floats); budgets derived in
// docs/mamba3-bounds.md §10 and checked by tests/emulation_budget_test.cpp; exp covers adt > 0
// as well; the division is IEEE (½ ULP).
ssmv::mamba3::StepContract host_emulation();

}  // namespace ssmv::bound::mamba3
