// Mamba-3 SISO on the family seam (verify/family/family.h): dumps of mamba_ssm's Triton step
// kernel (mamba3_siso_step, one launch per token, the four-part state stored after every token)
// read (dump_reading.h), run through the certified reference one token at a time
// (certified_trace.h) and judged element by element against the step bound
// (verify/bound/mamba3/step_bound.h, docs/mamba3-bounds.md).
//
// Kernel "mamba3_step". Contracts (--contract): mamba3_siso_step.production (the default: the
// kernel on an H200 as Triton 3.6 compiles it) and mamba3_siso_step.host_emulation (the C++
// library's fp32 transcendentals). The sharp verdict: sharp.h. Not yet: the prefill
// (mamba3_siso_combined), a hand-off, contract files.
#pragma once

#include "verify/family/family.h"

namespace ssmv::family::mamba3 {

const Family& family();

}  // namespace ssmv::family::mamba3
