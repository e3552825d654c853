// Mamba-3 SISO step kernel, property (a): the host emulation of mamba_ssm's step kernel
// (verify/bound/mamba3/step_emulation.h) is within the step bound of the certified run
// (verify/family/mamba3/certified_trace.h) under its contract (mamba3_siso_step.host_emulation)
// for every element of y and of the final four-part state, the angle judged on the circle —
// judged as `ssmv check` judges a dump (step_check.h). With the multiply-adds contracted into
// fmaf as Triton's enable_fp_fusion may, too.
//
// Case counts (base; ×100 in campaign mode): 2000 each.
#include "properties/harness/property.h"
#include "properties/mamba3/step_check.h"

namespace ssmv::prop::mamba3 {

SSMV_PROPERTY(Mamba3PropertyContract, HostEmulation, 2000, ()) {
  emulation_within_contract({}, "the host emulation");
}

SSMV_PROPERTY(Mamba3PropertyContract, HostEmulationFused, 2000, ()) {
  bound::mamba3::EmulationOptions o;
  o.fused = true;
  emulation_within_contract(o, "the host emulation (fused)");
}

}  // namespace ssmv::prop::mamba3
