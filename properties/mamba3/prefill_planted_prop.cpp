// Mamba-3 SISO chunked prefill: planted bugs, each caught. Each PrefillBug of the prefill's host
// emulation (verify/bound/mamba3/prefill_emulation.h) and each part of the four-part state dropped
// (zeroed) where the prefill hands it to the step kernel (prefill_check.h
// emulate_prefill_then_steps) runs the property "within contract" (prefill_contract_prop.cpp's,
// resp. prefill_handoff_prop.cpp's, on the same realistic problems and chunk sizes) and rapidcheck
// must find a case where some element of y or of the returned state is a VIOLATION (error above its
// bound). It then shrinks the case; the message (printed) names the shrunk problem with all its
// values and its chunk size, the worst element and the reproduce line, and the case's dump
// (mamba3_prefill or mamba3_handoff) re-judges to a VIOLATION through the Mamba-3 family's check,
// read back from the file as `ssmv check FILE` reads it. The bug, not the data: the contract and
// hand-off suites pass the same problems without it.
//
// Shrunk cases observed (root seed 20261130, 2026-12-05; every one one sequence, H = G = P = 1,
// R = 2, fp32 state, bf16 output, D and z off; found after 0–4 passing cases, 28–376 shrink steps,
// never ended by the shrink budget):
//   ShiftedGammaChunkMasked  chunk 1, 2 tokens, N = 4 (final S 21× its bound)
//   AngleCarryDropped        chunk 1, 1 token, N = 4 (final angle 306×)
//   InitialTrapTermDropped   chunk 1, 1 token, N = 4, an initial state (final S 9.1e5×)
//   IntraDecayOffByOne       chunk 16, 16 tokens, N = 6 (y 5.0×; rapidcheck's greedy shrinking
//                            stops there: no single smaller pick still fails)
//   StateUpdateUndecayed     chunk 2, 2 tokens, N = 4 (final S 3.0×)
//   DiagonalDropped          chunk 1, 1 token, N = 4 (y 256×)
//   Handoff*Dropped          chunk 1, 2 tokens, K = 1, N = 4 (angle: final angle 306×; S, B_prev,
//                            x_prev: final S 26×, the same element and value for all three: the
//                            shrunk tokens have equal dt and trap 0, so β_1 = α_1·γ_0 and each
//                            dropped part removes the same term)
//
// Two controls must pass on the same problems (300 cases each): the diagonal's products truncated
// to tf32 under a contract that declares it (qk_dot_tf32), and less rounding than the contract
// declares (Q/K stores and dot operands kept in fp32 where it rounds them to bf16).
//
// Case counts: at most 300 per bug, each stops at its first failing case; 300 per control.
#include "properties/harness/property.h"
#include "properties/mamba3/prefill_check.h"

namespace ssmv::prop::mamba3 {
namespace {

using bound::mamba3::PrefillBug;
using bound::mamba3::PrefillEmulationOptions;

void with_bug(PrefillBug bug, const char* name) {
  PrefillEmulationOptions o;
  o.bug = bug;
  prefill_within_contract(o, std::string("the prefill's emulation with planted bug ") + name);
}

void shifted_gamma_chunk_masked() { with_bug(PrefillBug::shifted_gamma_chunk_masked, "shifted_gamma_chunk_masked"); }
void angle_carry_dropped() { with_bug(PrefillBug::angle_carry_dropped, "angle_carry_dropped"); }
void initial_trap_term_dropped() { with_bug(PrefillBug::initial_trap_term_dropped, "initial_trap_term_dropped"); }
void intra_decay_off_by_one() { with_bug(PrefillBug::intra_decay_off_by_one, "intra_decay_off_by_one"); }
void state_update_undecayed() { with_bug(PrefillBug::state_update_undecayed, "state_update_undecayed"); }
void diagonal_dropped() { with_bug(PrefillBug::diagonal_dropped, "diagonal_dropped"); }
void handoff_angle_dropped() { handoff_within_contract(StatePart::angle, "the hand-off without the angle"); }
void handoff_S_dropped() { handoff_within_contract(StatePart::S, "the hand-off without S"); }
void handoff_B_prev_dropped() { handoff_within_contract(StatePart::B_prev, "the hand-off without B_prev"); }
void handoff_x_prev_dropped() { handoff_within_contract(StatePart::x_prev, "the hand-off without x_prev"); }

void control_tf32_declared() {
  PrefillEmulationOptions o;
  o.qk_dot_tf32 = true;  // matching_contract declares it
  prefill_within_contract(o, "the prefill's emulation with the tf32 diagonal (declared)");
}
void control_less_rounding() {
  PrefillEmulationOptions o;
  o.qk_store = Format::fp32;
  o.dot_operands = Format::fp32;  // the contract rounds both to bf16
  prefill_within_contract(o, "the prefill's emulation with fp32 Q/K stores and dot operands");
}

void caught(const std::string& name, void (*fn)()) { expect_caught("Mamba3PrefillPropertyPlanted", name, fn); }

}  // namespace

TEST(Mamba3PrefillPropertyPlanted, ShiftedGammaChunkMasked) {
  caught("ShiftedGammaChunkMasked", &shifted_gamma_chunk_masked);
}
TEST(Mamba3PrefillPropertyPlanted, AngleCarryDropped) { caught("AngleCarryDropped", &angle_carry_dropped); }
TEST(Mamba3PrefillPropertyPlanted, InitialTrapTermDropped) {
  caught("InitialTrapTermDropped", &initial_trap_term_dropped);
}
TEST(Mamba3PrefillPropertyPlanted, IntraDecayOffByOne) { caught("IntraDecayOffByOne", &intra_decay_off_by_one); }
TEST(Mamba3PrefillPropertyPlanted, StateUpdateUndecayed) { caught("StateUpdateUndecayed", &state_update_undecayed); }
TEST(Mamba3PrefillPropertyPlanted, DiagonalDropped) { caught("DiagonalDropped", &diagonal_dropped); }
TEST(Mamba3PrefillPropertyPlanted, HandoffAngleDropped) { caught("HandoffAngleDropped", &handoff_angle_dropped); }
TEST(Mamba3PrefillPropertyPlanted, HandoffSDropped) { caught("HandoffSDropped", &handoff_S_dropped); }
TEST(Mamba3PrefillPropertyPlanted, HandoffBPrevDropped) { caught("HandoffBPrevDropped", &handoff_B_prev_dropped); }
TEST(Mamba3PrefillPropertyPlanted, HandoffXPrevDropped) { caught("HandoffXPrevDropped", &handoff_x_prev_dropped); }

SSMV_REGISTER_PROPERTY(Mamba3PrefillPropertyPlanted, ControlTf32Declared, 300, false, control_tf32_declared);
SSMV_REGISTER_PROPERTY(Mamba3PrefillPropertyPlanted, ControlLessRounding, 300, false, control_less_rounding);
TEST(Mamba3PrefillPropertyPlanted, ControlTf32Declared) {
  run_property("Mamba3PrefillPropertyPlanted", "ControlTf32Declared", 300, rc::detail::toProperty(&control_tf32_declared));
}
TEST(Mamba3PrefillPropertyPlanted, ControlLessRounding) {
  run_property("Mamba3PrefillPropertyPlanted", "ControlLessRounding", 300, rc::detail::toProperty(&control_less_rounding));
}

}  // namespace ssmv::prop::mamba3
