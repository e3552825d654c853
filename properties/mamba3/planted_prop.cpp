// Mamba-3 SISO step kernel: planted bugs, each caught. A planted bug is a defect of the host
// emulation of mamba_ssm's step kernel: the PlantedBug variants of
// verify/bound/mamba3/step_emulation.h that the bound must catch (gate_via_tanh_approx stays within
// it by design: the sharp verdict's), and the four-part decode state dropped piece by piece at
// a hand-off (handoff.h: the emulation over [0, k) then over [k, len) from the returned state with
// the angle, S, B_prev or x_prev zeroed — a caller that forgets one part of the carried state).
//
// Each test runs the property "the emulation with this bug is within its contract"
// (contract_prop.cpp's judgement on realistic problems, step_gen.h) and expects rapidcheck to
// find a case where it is not: some element of y or of the final four-part state a VIOLATION
// (error above its bound). rapidcheck then shrinks the case; the failure message (printed)
// names the minimal problem with all its values, the worst element and the reproduce line, and
// the case's dump (step_check.h) re-judges to a VIOLATION through the Mamba-3 family's check,
// read back from the file as `ssmv check FILE` reads it. The bug, not the data: contract_prop.cpp
// and handoff_prop.cpp pass the same problems without it.
//
// Case counts: at most 300 per bug; each stops at its first failing case.
#include <gtest/gtest.h>

#include <string>

#include "properties/harness/property.h"
#include "properties/mamba3/handoff.h"
#include "properties/mamba3/step_check.h"
#include "properties/mamba3/step_gen.h"

namespace ssmv::prop::mamba3 {
namespace {

using bound::mamba3::PlantedBug;

void with_bug(PlantedBug bug, const char* name) {
  bound::mamba3::EmulationOptions o;
  o.bug = bug;
  emulation_within_contract(o, std::string("the emulation with planted bug ") + name);
}

void with_part_dropped(StatePart part) {
  StepOptions o;
  o.min_len = 2;
  const GeneratedStep g = *step_problem(o);
  label_case(g);
  const std::vector<int64_t> k = draw_split(g.problem);
  run_step_case(g.problem, [&] {
    return expect_within(g.problem, emulate_handed_off(g.problem, k, part),
                         "the emulation handing its state over without " + state_part_name(part));
  });
}

void beta_uses_current_b() { with_bug(PlantedBug::beta_uses_current_b, "beta_uses_current_b"); }
void beta_without_decay() { with_bug(PlantedBug::beta_without_decay, "beta_without_decay"); }
void angle_state_ignored() { with_bug(PlantedBug::angle_state_ignored, "angle_state_ignored"); }
void state_rounded_before_update() { with_bug(PlantedBug::state_rounded_before_update, "state_rounded_before_update"); }
void angle_stored_bf16() { with_bug(PlantedBug::angle_stored_bf16, "angle_stored_bf16"); }
void crude_exp2() { with_bug(PlantedBug::crude_exp2, "crude_exp2"); }
void rotation_pairs_halves() { with_bug(PlantedBug::rotation_pairs_halves, "rotation_pairs_halves"); }
void handoff_angle_dropped() { with_part_dropped(StatePart::angle); }
void handoff_S_dropped() { with_part_dropped(StatePart::S); }
void handoff_B_prev_dropped() { with_part_dropped(StatePart::B_prev); }
void handoff_x_prev_dropped() { with_part_dropped(StatePart::x_prev); }

void caught(const std::string& name, void (*fn)()) { expect_caught("Mamba3PropertyPlanted", name, fn); }

}  // namespace

TEST(Mamba3PropertyPlanted, BetaUsesCurrentB) { caught("BetaUsesCurrentB", &beta_uses_current_b); }
TEST(Mamba3PropertyPlanted, BetaWithoutDecay) { caught("BetaWithoutDecay", &beta_without_decay); }
TEST(Mamba3PropertyPlanted, AngleStateIgnored) { caught("AngleStateIgnored", &angle_state_ignored); }
TEST(Mamba3PropertyPlanted, StateRoundedBeforeUpdate) {
  caught("StateRoundedBeforeUpdate", &state_rounded_before_update);
}
TEST(Mamba3PropertyPlanted, AngleStoredBf16) { caught("AngleStoredBf16", &angle_stored_bf16); }
TEST(Mamba3PropertyPlanted, CrudeExp2) { caught("CrudeExp2", &crude_exp2); }
TEST(Mamba3PropertyPlanted, RotationPairsHalves) { caught("RotationPairsHalves", &rotation_pairs_halves); }
TEST(Mamba3PropertyPlanted, HandoffAngleDropped) { caught("HandoffAngleDropped", &handoff_angle_dropped); }
TEST(Mamba3PropertyPlanted, HandoffSDropped) { caught("HandoffSDropped", &handoff_S_dropped); }
TEST(Mamba3PropertyPlanted, HandoffBPrevDropped) { caught("HandoffBPrevDropped", &handoff_B_prev_dropped); }
TEST(Mamba3PropertyPlanted, HandoffXPrevDropped) { caught("HandoffXPrevDropped", &handoff_x_prev_dropped); }

}  // namespace ssmv::prop::mamba3
