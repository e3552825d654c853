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

#include <cstdio>
#include <cstdlib>
#include <string>

#include "properties/harness/property.h"
#include "properties/mamba3/handoff.h"
#include "properties/mamba3/step_check.h"
#include "properties/mamba3/step_gen.h"
#include "verify/family/mamba3/mamba3_family.h"
#include "verify/tensor_file/dump_metadata.h"
#include "verify/tensor_file/tensor_file.h"

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

// Runs the property of one bug, expects it to fail with a VIOLATION, prints the message (the
// shrunk case) and re-judges the dump from its file. No result file: the failure is expected.
void expect_caught(const std::string& name, void (*fn)()) {
  const char* results = std::getenv("SSMV_PROP_RESULTS");
  const std::string saved = results ? results : "";
  unsetenv("SSMV_PROP_RESULTS");
  const PropertyOutcome o = check_property("Mamba3PropertyPlanted", name, 300, rc::detail::toProperty(fn));
  if (results) setenv("SSMV_PROP_RESULTS", saved.c_str(), 1);
  ASSERT_FALSE(o.passed) << name << ": not caught in " << o.cases << " cases";
  std::printf("[planted] %s caught after %lld passing cases, %lld shrink steps%s; the shrunk case:\n%s\n",
              name.c_str(), (long long)o.cases, (long long)o.shrink_steps,
              o.shrink_budget_ended ? " (ended by the shrink budget)" : "", o.message.c_str());
  EXPECT_NE(o.message.find("verdict VIOLATION"), std::string::npos) << o.message;

  const std::string path = current_dump_path();
  std::map<std::string, std::string> metadata;
  const tensor_file::TensorMap m = tensor_file::load_tensor_file(path, &metadata);
  family::DumpFiles files;
  files.problem_path = files.outputs_path = path;
  files.problem_tensors = files.output_tensors = &m;
  files.options = tensor_file::dump_options_from_metadata(metadata, path, {"mamba3_step"});
  family::CheckOptions c;
  c.sharp = false;
  const verify::KernelCheck k = family::mamba3::family().read(files)->check(path, c).entry.check;
  EXPECT_EQ(k.overall(), verify::Verdict::violation) << path;
}

}  // namespace

TEST(Mamba3PropertyPlanted, BetaUsesCurrentB) { expect_caught("BetaUsesCurrentB", &beta_uses_current_b); }
TEST(Mamba3PropertyPlanted, BetaWithoutDecay) { expect_caught("BetaWithoutDecay", &beta_without_decay); }
TEST(Mamba3PropertyPlanted, AngleStateIgnored) { expect_caught("AngleStateIgnored", &angle_state_ignored); }
TEST(Mamba3PropertyPlanted, StateRoundedBeforeUpdate) {
  expect_caught("StateRoundedBeforeUpdate", &state_rounded_before_update);
}
TEST(Mamba3PropertyPlanted, AngleStoredBf16) { expect_caught("AngleStoredBf16", &angle_stored_bf16); }
TEST(Mamba3PropertyPlanted, CrudeExp2) { expect_caught("CrudeExp2", &crude_exp2); }
TEST(Mamba3PropertyPlanted, RotationPairsHalves) { expect_caught("RotationPairsHalves", &rotation_pairs_halves); }
TEST(Mamba3PropertyPlanted, HandoffAngleDropped) { expect_caught("HandoffAngleDropped", &handoff_angle_dropped); }
TEST(Mamba3PropertyPlanted, HandoffSDropped) { expect_caught("HandoffSDropped", &handoff_S_dropped); }
TEST(Mamba3PropertyPlanted, HandoffBPrevDropped) { expect_caught("HandoffBPrevDropped", &handoff_B_prev_dropped); }
TEST(Mamba3PropertyPlanted, HandoffXPrevDropped) { expect_caught("HandoffXPrevDropped", &handoff_x_prev_dropped); }

}  // namespace ssmv::prop::mamba3
