// Hints for likely mistakes in describing a dump, printed beside an error or a failing
// verdict (never instead of one): each names what it saw in the dump and the option that
// would change it. A hint is a guess; the verdict stands as judged.
#pragma once

#include <string>
#include <vector>

#include "spec/problem.h"

namespace ssmv::cli {

// δ = dt + dt_bias ≤ 0 somewhere while the dump is judged without softplus: a kernel whose
// δ can be negative is unusual (exp(δ·A) > 1 grows the state), a forgotten --dt-softplus is
// not (mamba_ssm's Python default is dt_softplus=False, its models pass True). "" if none.
std::string softplus_hint(const Problem& p);

// Every value of an fp32 (fp16) output or state tensor is also a bf16 (fp16) value: the
// kernel likely stored the narrower format and the dump widened it ("these look like bf16
// values: --output-format bf16?"). `tensor` is "y" or "final_states". "" if none.
std::string narrower_format_hint(const std::string& tensor, Format declared, const std::vector<float>& values);

}  // namespace ssmv::cli
