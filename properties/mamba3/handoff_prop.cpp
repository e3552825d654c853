// Mamba-3 SISO step kernel: the four-part state handed from one call to the next. The host
// emulation over [0, k_s) of each sequence and then over [k_s, len_s) from the state the first
// call returned gives the same bits as one call over every token (the emulation stores the
// four-part state in its formats after every token, so nothing may change at a call boundary),
// plain and fused. This is the honest control of the planted "hand-off state dropped" bugs
// (planted_prop.cpp), which hand the same state over with one part zeroed.
//
// Case counts (base; ×100 in campaign mode): 10000 (no reference: the emulation only).
#include "properties/harness/property.h"
#include "properties/mamba3/handoff.h"
#include "properties/mamba3/step_check.h"
#include "properties/mamba3/step_gen.h"

namespace ssmv::prop::mamba3 {

SSMV_PROPERTY(Mamba3PropertyHandoff, EmulationSplitSameBits, 10000, ()) {
  StepOptions o;
  o.min_len = 2;
  const GeneratedStep g = *step_problem(o);
  label_case(g);
  const std::vector<int64_t> k = draw_split(g.problem);
  run_step_case(g.problem, [&]() -> std::optional<StepFailure> {
    for (bool fused : {false, true}) {
      bound::mamba3::EmulationOptions e;
      e.fused = fused;
      const Outputs whole = outputs_of(bound::mamba3::emulate_steps(g.problem, e));
      const Outputs split = emulate_handed_off(g.problem, k, StatePart::none, e);
      const std::string what = fused ? "fused emulation, one call vs split:" : "emulation, one call vs split:";
      if (auto f = same_bits(what + " y", whole.y, split.y)) return f;
      if (auto f = same_bits(what + " angle", whole.final_state.angle, split.final_state.angle)) return f;
      if (auto f = same_bits(what + " S", whole.final_state.S, split.final_state.S)) return f;
      if (auto f = same_bits(what + " B_prev", whole.final_state.B_prev, split.final_state.B_prev)) return f;
      if (auto f = same_bits(what + " x_prev", whole.final_state.x_prev, split.final_state.x_prev)) return f;
    }
    return std::nullopt;
  });
}

}  // namespace ssmv::prop::mamba3
