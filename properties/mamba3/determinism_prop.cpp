// Mamba-3 SISO step kernel, property (b): determinism. The host emulation (plain and fused)
// and the step bound (both contract presets, from one certified trace) give the same bits when
// run twice on the same problem.
//
// Case counts (base; ×100 in campaign mode): 3000.
#include "properties/harness/property.h"
#include "properties/mamba3/step_check.h"
#include "properties/mamba3/step_gen.h"
#include "verify/bound/mamba3/step_bound.h"
#include "verify/bound/mamba3/step_contract.h"
#include "verify/family/mamba3/certified_trace.h"

namespace ssmv::prop::mamba3 {

SSMV_PROPERTY(Mamba3PropertyDeterminism, EmulationAndBound, 3000, ()) {
  const GeneratedStep g = *step_problem();
  label_case(g);
  const ssmv::mamba3::Problem& p = g.problem;
  run_step_case(p, [&]() -> std::optional<StepFailure> {
    for (bool fused : {false, true}) {
      bound::mamba3::EmulationOptions o;
      o.fused = fused;
      const std::string what = fused ? "emulation (fused), run 1 vs run 2:" : "emulation, run 1 vs run 2:";
      if (auto f = same_parts(what, bound::mamba3::emulate_steps(p, o), bound::mamba3::emulate_steps(p, o))) {
        return f;
      }
    }
    const family::mamba3::CertifiedRun run = family::mamba3::certified_run(p);
    for (const ssmv::mamba3::StepContract& c : {bound::mamba3::host_emulation(), bound::mamba3::production_h200()}) {
      const std::string what = c.name + ", run 1 vs run 2:";
      if (auto f = same_parts(what + " bound", bound::mamba3::step_bounds(p, c, run.trace),
                               bound::mamba3::step_bounds(p, c, run.trace))) {
        return f;
      }
    }
    return std::nullopt;
  });
}

}  // namespace ssmv::prop::mamba3
