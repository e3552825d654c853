// Mamba-3 SISO chunked prefill, within contract: the host emulation of mamba_ssm's prefill
// (verify/bound/mamba3/prefill_emulation.h) is within prefill_bounds (prefill_bound.h) of the
// certified run under mamba3_siso_combined.host_emulation with the angle store and the diagonal's
// tf32 truncation the emulation runs with (prefill_check.h matching_contract), for every element of
// y and of the returned four-part state (the angle on the circle), on realistic problems
// (prefill_check.h: the step suites' generator, sequences of 1–20 or 16–128 tokens) with a chunk
// size drawn from {1, 2, 3, 4, 8, 16, 64}:
//   HostEmulation  the emulation as mamba3_siso_combined runs it (θ stored in bf16, fp32 diagonal);
//   Fused          every multiply-add contracted and the dots folded into their accumulators;
//   Tf32Diagonal   the diagonal's products truncated to tf32 (the H200's mma), fused or not;
//   Fp32Angles     θ kept in fp32 (semantics question 1's fix), fused or not, tf32 or not.
// Each test prints the distribution of its cases' largest bound usage (error ÷ bound).
//
// Case counts (base; ×100 in campaign mode): 400 each.
#include "properties/harness/property.h"
#include "properties/mamba3/prefill_check.h"

namespace ssmv::prop::mamba3 {
namespace {

using bound::mamba3::PrefillEmulationOptions;

void host_emulation() { prefill_within_contract({}, "the prefill's host emulation"); }
void fused() {
  PrefillEmulationOptions o;
  o.fused = true;
  prefill_within_contract(o, "the prefill's host emulation (fused)");
}
void tf32_diagonal() {
  PrefillEmulationOptions o;
  o.qk_dot_tf32 = true;
  prefill_within_contract(o, "the prefill's host emulation with the tf32 diagonal", {.fused = true});
}
void fp32_angles() {
  PrefillEmulationOptions o;
  o.angle_store = Format::fp32;
  prefill_within_contract(o, "the prefill's host emulation with fp32 angles", {.fused = true, .qk_dot_tf32 = true});
}

}  // namespace

SSMV_REGISTER_PROPERTY(Mamba3PrefillPropertyContract, HostEmulation, 400, false, host_emulation);
SSMV_REGISTER_PROPERTY(Mamba3PrefillPropertyContract, Fused, 400, false, fused);
SSMV_REGISTER_PROPERTY(Mamba3PrefillPropertyContract, Tf32Diagonal, 400, false, tf32_diagonal);
SSMV_REGISTER_PROPERTY(Mamba3PrefillPropertyContract, Fp32Angles, 400, false, fp32_angles);
TEST(Mamba3PrefillPropertyContract, HostEmulation) {
  run_with_usage("Mamba3PrefillPropertyContract", "HostEmulation", 400, &host_emulation);
}
TEST(Mamba3PrefillPropertyContract, Fused) { run_with_usage("Mamba3PrefillPropertyContract", "Fused", 400, &fused); }
TEST(Mamba3PrefillPropertyContract, Tf32Diagonal) {
  run_with_usage("Mamba3PrefillPropertyContract", "Tf32Diagonal", 400, &tf32_diagonal);
}
TEST(Mamba3PrefillPropertyContract, Fp32Angles) {
  run_with_usage("Mamba3PrefillPropertyContract", "Fp32Angles", 400, &fp32_angles);
}

}  // namespace ssmv::prop::mamba3
