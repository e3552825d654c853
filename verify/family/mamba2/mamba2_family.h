// Mamba2 (the sequential SSU decode, the chunked chunk_scan prefill and their hand-off) on the
// family seam (verify/family/family.h): its kernels' dumps read (dump_reading.h) and checked
// by verify/judge/external_check.h, with the sharp verdict and the stochastic-bias test.
#pragma once

#include <string>

#include "spec/problem.h"
#include "verify/family/family.h"

namespace ssmv::family::mamba2 {

// Kernels "ssu", "chunk_scan", "handoff" (verify::ExternalKernel).
const Family& family();

// δ = dt + dt_bias ≤ 0 somewhere while the dump is judged without softplus: a kernel whose
// δ can be negative is unusual (exp(δ·A) > 1 grows the state), a forgotten --dt-softplus is
// not (mamba_ssm's Python default is dt_softplus=False, its models pass True). "" if none.
std::string softplus_hint(const Problem& p);

}  // namespace ssmv::family::mamba2
