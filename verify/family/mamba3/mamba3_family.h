// Mamba-3 SISO on the family seam (verify/family/family.h): dumps of mamba_ssm's Triton kernels
// read (dump_reading.h), run through the certified reference one token at a time
// (certified_trace.h) and judged element by element against their bounds
// (verify/bound/mamba3/step_bound.h, prefill_bound.h; docs/mamba3-bounds.md parts I and II).
//
// Kernels: "mamba3_step" (mamba3_siso_step, one launch per token, the four-part state stored after
// every token), "mamba3_prefill" (the chunked mamba3_siso_combined), "mamba3_handoff" (the prefill
// over each sequence's first prefill_tokens, then the step kernel from the state it returned:
// handoff.h). Contracts (--contract, and --decode-contract for a hand-off's steps):
// mamba3_siso_step.production / .host_emulation; mamba3_siso_combined.production (the default: the
// kernels on an H200 as Triton 3.6 compiles them, θ stored in bf16 as shipped) / .fp32_angles /
// .host_emulation, or a contract file (contracts.h, contract_file.h). The sharp verdict: sharp.h.
// The presets in `ssmv contract list` / `show` (contracts.h) and the rows of `ssmv bounds`
// (bounds_rows.h) through Family::contract_presets and Family::bounds_rows.
#pragma once

#include "verify/family/family.h"

namespace ssmv::family::mamba3 {

const Family& family();

}  // namespace ssmv::family::mamba3
