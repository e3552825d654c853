// Property 1: SSU (decode, host twin) stays within its contract for fp32, bf16 and fp16
// state. Each case: a decode problem (realistic or adversarial, generators in gen/), the
// twin's y and state pool judged element by element against the certified reference and
// the sequential bound (verify/run/kernel_check.h).
//
// Case counts (base; ×100 in campaign mode): 12000 per state format. Problems have ≤ 8192
// state updates (T·H·P·N), well under a millisecond of reference each on average.
#include "properties/gen/problem_gen.h"
#include "properties/harness/case_failure.h"
#include "properties/harness/property.h"

namespace ssmv::prop {
namespace {

DecodeOptions with_state(Format f) {
  DecodeOptions o;
  o.state_format = f;
  return o;
}

void ssu_within_contract(const GeneratedDecode& g) {
  label_case(g);
  expect_within_contract(decode_case(g.decode, verify::Device::twin),
                         [&] { return verify::check_ssu(g.decode, verify::Device::twin); });
}

}  // namespace

SSMV_PROPERTY(SsuContract, StateFp32, 12000, ()) { ssu_within_contract(*decode_problem(with_state(Format::fp32))); }
SSMV_PROPERTY(SsuContract, StateBf16, 12000, ()) { ssu_within_contract(*decode_problem(with_state(Format::bf16))); }
SSMV_PROPERTY(SsuContract, StateFp16, 12000, ()) { ssu_within_contract(*decode_problem(with_state(Format::fp16))); }

}  // namespace ssmv::prop
