// The contract presets of mamba_ssm's Mamba-3 SISO prefill (mamba3_siso_combined at e9594ce1c732:
// angle_dt_fwd_kernel, then mamba3_siso_fwd_kernel, chunked) and of its host emulation
// (prefill_emulation.h): PrefillContracts (spec/mamba3/contract.h: the formats it stores between its
// stages, the dots' models, the budgets of its transcendentals). The bound that reads them:
// prefill_bound.h; where every default comes from: docs/mamba3-bounds.md, part II.
#pragma once

#include "spec/mamba3/contract.h"

namespace ssmv::bound::mamba3 {

// "mamba3_siso_combined.production": the kernels on an H200 as Triton 3.6 compiles them, θ stored
// in bf16 as shipped; tanh, cos, sin and exp2 budgets measured on the H200 (docs/measurements/
// mamba3-transcendentals.md), sigmoid and silu from docs/measurements/triton-budgets.md.
ssmv::mamba3::PrefillContract prefill_production_h200();
// "mamba3_siso_combined.fp32_angles": the same kernels' budgets with θ kept in fp32 (as the step
// kernel keeps it). mamba_ssm's prefill as shipped stores θ in bf16 and may exceed it.
ssmv::mamba3::PrefillContract prefill_fp32_angles();
// "mamba3_siso_combined.host_emulation": prefill_emulation.h with the C++ library's functions.
ssmv::mamba3::PrefillContract prefill_host_emulation();

}  // namespace ssmv::bound::mamba3
