// Mamba-3 SISO prefill→decode hand-off: every sequence's first K tokens through the prefill's host
// emulation, the rest through the step kernel's host emulation (step_emulation.h) one token at a
// time from the four-part state the prefill returned, as mamba_ssm's serving runs them; every
// element of y (all tokens) and of the final four-part state within handoff_bounds
// (verify/family/mamba3/handoff.h: the prefill bound over the first K tokens, then the step bound
// started from the prefill's returned state with its errors) under
// mamba3_siso_combined.host_emulation then mamba3_siso_step.host_emulation, each (sequence, head)
// pair against its own certified run. Sequences of 2–20 tokens (or one of 16–128), K in
// [1, longest − 1] (a sequence of at most K tokens goes through the prefill alone), a chunk size
// from {1, 2, 3, 4, 8, 16, 64}, both emulations fused or neither. The honest control of the
// planted "prefill hand-off state dropped" bugs (prefill_planted_prop.cpp).
//
// Case counts (base; ×100 in campaign mode): 400.
#include "properties/harness/property.h"
#include "properties/mamba3/prefill_check.h"

namespace ssmv::prop::mamba3 {
namespace {

void within_handoff_bounds() { handoff_within_contract(StatePart::none, "the prefill→decode hand-off"); }

}  // namespace

SSMV_REGISTER_PROPERTY(Mamba3PrefillPropertyHandoff, WithinHandoffBounds, 400, false, within_handoff_bounds);
TEST(Mamba3PrefillPropertyHandoff, WithinHandoffBounds) {
  run_with_usage("Mamba3PrefillPropertyHandoff", "WithinHandoffBounds", 400, &within_handoff_bounds);
}

}  // namespace ssmv::prop::mamba3
