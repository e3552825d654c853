// Property 1: SSU (decode, host twin) stays within its contract for fp32, bf16 and fp16
// state. Each case: a decode problem (realistic or adversarial, generators in gen/), the
// twin's y and state pool judged element by element against the certified reference and
// the sequential bound (verify/run/kernel_check.h). The properties, their case body and
// counts: contract_properties.h (SsuContract.StateFp32, StateBf16, StateFp16).
//
// Case counts (base; ×100 in campaign mode): 12000 per state format. Problems have ≤ 8192
// state updates (T·H·P·N), well under a millisecond of reference each on average.
#include "properties/suites/contract_properties.h"

namespace ssmv::prop {
namespace {

const bool registered = register_contract_properties("ssu");

}  // namespace
}  // namespace ssmv::prop
