// Hints for likely mistakes in describing a dump, printed beside an error or a failing
// verdict (never instead of one): each names what it saw in the dump and the option that
// would change it. A hint is a guess; the verdict stands as judged. The hints of every
// family are here; a family's own (Mamba2's forgotten softplus) are in its folder.
#pragma once

#include <string>
#include <vector>

#include "spec/format.h"
#include "spec/format_values.h"

namespace ssmv::family {

// Every value of an fp32 (fp16) output or state tensor is also a bf16 (fp16) value: the
// kernel likely stored the narrower format and the dump widened it ("these look like bf16
// values: --output-format bf16?"). `tensor` is "y" or "final_states". "" if none.
// (Mamba2's tensors are FormatValues, Mamba-3's floats.)
std::string narrower_format_hint(const std::string& tensor, Format declared, const std::vector<float>& values);
std::string narrower_format_hint(const std::string& tensor, Format declared, const FormatValues& values);

}  // namespace ssmv::family
