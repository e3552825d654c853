// The host emulation of mamba_ssm's Mamba-3 SISO chunked prefill (prefill_emulation.h) on its
// own: a case where every operation is exact against values derived by hand, identities that hold
// bit for bit (determinism, causality, independence of packed sequences, chunk-boundary bugs
// inert in one chunk), each planted bug and each option taking effect, the noise's seed, and the
// errors it throws. Its agreement with the exact recurrence within the bound is
// tests/prefill_bound_test.cpp's.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "reference/mamba3/tests/test_problem.h"
#include "spec/format.h"
#include "spec/problem.h"  // ProblemError
#include "verify/bound/mamba3/prefill_emulation.h"

namespace ssmv::bound::mamba3 {
namespace {

using ssmv::mamba3::Problem;
namespace rt = ssmv::ref::mamba3::testing;

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}
bool same_bits(const EmulatedSteps& a, const EmulatedSteps& b) {
  return same_bits(a.y, b.y) && same_bits(a.angle, b.angle) && same_bits(a.S, b.S) && same_bits(a.B_prev, b.B_prev) &&
         same_bits(a.x_prev, b.x_prev);
}

// Two sequences (11 and 19 tokens: several chunks of 4, a partial last chunk), two heads sharing
// one group, R < N/2 (unturned pairs), D, z and an initial four-part state, upstream's draws; y in
// fp32 (the state is), so that a change of one rounding shows.
Problem random_case(uint64_t seed = 5) {
  Problem pr = rt::random_problem({0, 11, 30}, 2, 4, 16, 1, 4, seed, true);
  pr.formats.output = Format::fp32;
  return pr;
}

PrefillEmulationOptions chunked(int64_t chunk) {
  PrefillEmulationOptions o;
  o.chunk_size = chunk;
  return o;
}

// One sequence of 3 tokens, H = G = P = 1, N = 2, R = 1, with every operation exact:
//   angles = 0, initial angle 0: θ = 0, cos θ = 1, sin θ = 0 (no turn);
//   trap = 0: λ = σ(0) = 1/(1 + 2^0) = ½ exactly, 1 − λ = ½;  adt = 0: every decay exp2(0) = 1;
//   dt = 1: γ = ½, β = ½ (the scale of tokens 0 and 1 is ½ + ½ = 1, of the last token ½);
//   small integers elsewhere, so every sum, product, bf16 store and bf16 dot operand is exact.
// q = C + C_bias, k = B + B_bias:  q0 = (1, 1), q1 = (2, 2), q2 = (−1, 2);  k0 = (1, 2), k1 = (0, 1),
// k2 = (2, −1);  x = 2, −1, 3;  D = 1;  S0 = (4, −2), b_prev = (1, 1), x_prev = 2.
// The recurrence (docs/mamba3-semantics.md §3), S_t = S_{t−1} + β·x_{t−1}·k_{t−1} + γ·x_t·k_t,
// y_t = q_t·S_t + D·x_t:
//   t = 0: S = (4, −2) + ½·2·(1, 1) + ½·2·(1, 2) = (6, 1),           y = 7 + 2 = 9
//   t = 1: S = (6, 1) + ½·2·(1, 2) + ½·(−1)·(0, 1) = (7, 2.5),       y = 19 − 1 = 18
//   t = 2: S = (7, 2.5) + ½·(−1)·(0, 1) + ½·3·(2, −1) = (10, 0.5),   y = −9 + 3 = −6
// and the final state: θ = 0, S = (10, 0.5), b_prev = k2 = (2, −1), x_prev = 3.
Problem exact_case() {
  Problem pr = rt::zero_problem({0, 3}, 1, 1, 2, 1, 1);
  pr.formats = {Format::bf16, Format::bf16, Format::fp32, Format::bf16};
  pr.x = {2, -1, 3};
  pr.C = {1, 0, 2, 1, -1, 1};
  pr.B = {0, 2, -1, 1, 1, -1};
  pr.dt = {1, 1, 1};
  pr.C_bias = {0, 1};
  pr.B_bias = {1, 0};
  pr.D = {1};
  pr.initial.angle = {0};
  pr.initial.S = {4, -2};
  pr.initial.B_prev = {1, 1};
  pr.initial.x_prev = {2};
  return pr;
}

void expect_exact(const EmulatedSteps& e, const std::vector<float>& y, const std::vector<float>& S) {
  EXPECT_EQ(e.y, y);
  EXPECT_EQ(e.S, S);
  EXPECT_EQ(e.B_prev, (std::vector<float>{2, -1}));
  EXPECT_EQ(e.x_prev, (std::vector<float>{3}));
  EXPECT_EQ(e.angle, (std::vector<float>{0}));
}

// Whatever the chunking (the chunked form is the recurrence's function; with every operation
// exact it is the same numbers) and with or without contraction (an FMA of exact values is exact).
TEST(Mamba3PrefillEmulation, ExactCaseGivesTheHandDerivedValues) {
  for (int64_t chunk : {1, 2, 3, 64}) {
    for (bool fused : {false, true}) {
      PrefillEmulationOptions o = chunked(chunk);
      o.fused = fused;
      SCOPED_TRACE(::testing::Message() << "chunk " << chunk << " fused " << fused);
      expect_exact(emulate_prefill(exact_case(), o), {9, 18, -6}, {10, 0.5f});
    }
  }
}

// The planted bugs on the exact case, each derived from the values above:
//   initial_trap_term_dropped: S starts from S0 without β·x_prev·b_prev = (1, 1), so every y loses
//     q_t·(1, 1) = 2, 4, 1 and the final S (1, 1);
//   diagonal_dropped: every y loses γ·(q_t·k_t)·x_t = ½·3·2, ½·2·(−1), ½·(−4)·3 = 3, −1, −6;
//   shifted_gamma_chunk_masked with chunks of 2: token 1 ends a chunk, its scale loses
//     (1 − λ_2)·dt_2 = ½, so the state after the chunk lacks ½·x_1·k_1 = (0, −½): y_2 = −6 + q_2·(0, ½)
//     = −5, the final S (10, 1).
TEST(Mamba3PrefillEmulation, PlantedBugsOnTheExactCase) {
  PrefillEmulationOptions o = chunked(2);
  o.bug = PrefillBug::initial_trap_term_dropped;
  expect_exact(emulate_prefill(exact_case(), o), {7, 14, -7}, {9, -0.5f});
  o.bug = PrefillBug::diagonal_dropped;
  expect_exact(emulate_prefill(exact_case(), o), {6, 19, 0}, {10, 0.5f});
  o.bug = PrefillBug::shifted_gamma_chunk_masked;
  expect_exact(emulate_prefill(exact_case(), o), {9, 18, -5}, {10, 1});
}

TEST(Mamba3PrefillEmulation, Deterministic) {
  const Problem pr = random_case();
  PrefillEmulationOptions o = chunked(4);
  EXPECT_TRUE(same_bits(emulate_prefill(pr, o), emulate_prefill(pr, o)));
  o.noise_seed = 7;
  EXPECT_TRUE(same_bits(emulate_prefill(pr, o), emulate_prefill(pr, o)));
}

// Bit for bit: y of a token reads nothing of later tokens (the next token's dt and trap reach
// only its K_store row, which only later tokens and the state read), and a sequence reads nothing
// of the others packed with it (its chunks start at its first token). So shortening the second
// sequence from 19 to 6 tokens leaves the first sequence's y and final state and the second's
// first 6 y rows as they were.
TEST(Mamba3PrefillEmulation, CausalAndSequencesIndependent) {
  const Problem full = random_case();
  const Problem cut = rt::slice(full, {0, 0}, {11, 6});
  for (bool fused : {false, true}) {
    PrefillEmulationOptions o = chunked(4);
    o.fused = fused;
    const EmulatedSteps a = emulate_prefill(full, o), b = emulate_prefill(cut, o);
    const int64_t H = full.shape.H, P = full.shape.P, N = full.shape.N, R = full.shape.R;
    const auto prefix = [](const std::vector<float>& v, int64_t n) {
      return std::vector<float>(v.begin(), v.begin() + n);
    };
    EXPECT_TRUE(same_bits(prefix(a.y, (11 + 6) * H * P), prefix(b.y, (11 + 6) * H * P)));
    EXPECT_TRUE(same_bits(prefix(a.angle, H * R), prefix(b.angle, H * R)));
    EXPECT_TRUE(same_bits(prefix(a.S, H * P * N), prefix(b.S, H * P * N)));
    EXPECT_TRUE(same_bits(prefix(a.B_prev, H * N), prefix(b.B_prev, H * N)));
    EXPECT_TRUE(same_bits(prefix(a.x_prev, H * P), prefix(b.x_prev, H * P)));
    EXPECT_FALSE(same_bits(a.S, b.S));  // the second sequence's state does change
  }
}

// With one chunk per sequence the chunk-boundary bugs have no boundary to act on: the masked next
// token changes nothing at all, and the dropped angle carry only leaves the returned angle state
// at the initial one (stored in the angle format), y and the rest unchanged.
TEST(Mamba3PrefillEmulation, ChunkBoundaryBugsInertInOneChunk) {
  const Problem pr = random_case();
  PrefillEmulationOptions o = chunked(19);
  const EmulatedSteps plain = emulate_prefill(pr, o);
  o.chunk_size = 1000;
  EXPECT_TRUE(same_bits(emulate_prefill(pr, o), plain));
  o.bug = PrefillBug::shifted_gamma_chunk_masked;
  EXPECT_TRUE(same_bits(emulate_prefill(pr, o), plain));
  o.bug = PrefillBug::angle_carry_dropped;
  EmulatedSteps e = emulate_prefill(pr, o);
  std::vector<float> initial = pr.initial.angle;
  for (float& v : initial) v = float(round_value(o.angle_store, v));
  EXPECT_TRUE(same_bits(e.angle, initial));
  e.angle = plain.angle;
  EXPECT_TRUE(same_bits(e, plain));
}

// In chunks of 4 every planted bug changes y (the control: none against none is Deterministic).
TEST(Mamba3PrefillEmulation, EveryPlantedBugChangesY) {
  const Problem pr = random_case();
  const EmulatedSteps plain = emulate_prefill(pr, chunked(4));
  for (PrefillBug bug : {PrefillBug::shifted_gamma_chunk_masked, PrefillBug::angle_carry_dropped,
                         PrefillBug::initial_trap_term_dropped, PrefillBug::intra_decay_off_by_one,
                         PrefillBug::state_update_undecayed, PrefillBug::diagonal_dropped}) {
    PrefillEmulationOptions o = chunked(4);
    o.bug = bug;
    EXPECT_FALSE(same_bits(emulate_prefill(pr, o).y, plain.y)) << "planted bug " << int(bug);
  }
}

// Each option reaches the arithmetic: θ kept in fp32 instead of bf16 (y and the returned angle),
// Q_store/K_store or the dot operands in fp32, contraction, the chunk size.
TEST(Mamba3PrefillEmulation, EveryOptionTakesEffect) {
  const Problem pr = random_case();
  const EmulatedSteps plain = emulate_prefill(pr, chunked(4));
  PrefillEmulationOptions o = chunked(4);
  o.angle_store = Format::fp32;
  const EmulatedSteps fp32_angles = emulate_prefill(pr, o);
  EXPECT_FALSE(same_bits(fp32_angles.y, plain.y));
  EXPECT_FALSE(same_bits(fp32_angles.angle, plain.angle));
  o = chunked(4);
  o.qk_store = Format::fp32;
  EXPECT_FALSE(same_bits(emulate_prefill(pr, o).y, plain.y));
  o = chunked(4);
  o.dot_operands = Format::fp32;
  EXPECT_FALSE(same_bits(emulate_prefill(pr, o).y, plain.y));
  o = chunked(4);
  o.fused = true;
  EXPECT_FALSE(same_bits(emulate_prefill(pr, o).y, plain.y));
  EXPECT_FALSE(same_bits(emulate_prefill(pr, chunked(5)).y, plain.y));
}

// Seed 0 is the plain arithmetic; a seed moves y, and each seed its own way.
TEST(Mamba3PrefillEmulation, NoiseSeed) {
  const Problem pr = random_case();
  PrefillEmulationOptions o = chunked(4);
  const EmulatedSteps plain = emulate_prefill(pr, o);
  o.noise_seed = 0;
  EXPECT_TRUE(same_bits(emulate_prefill(pr, o), plain));
  o.noise_seed = 1;
  const EmulatedSteps one = emulate_prefill(pr, o);
  EXPECT_FALSE(same_bits(one.y, plain.y));
  o.noise_seed = 2;
  EXPECT_FALSE(same_bits(emulate_prefill(pr, o).y, one.y));
}

TEST(Mamba3PrefillEmulation, Throws) {
  for (int64_t chunk : {0, -1}) {
    try {
      emulate_prefill(random_case(), chunked(chunk));
      ADD_FAILURE() << "chunk_size " << chunk << " accepted";
    } catch (const ProblemError&) {
      ADD_FAILURE() << "chunk_size " << chunk << " reported as a problem error";
    } catch (const std::invalid_argument&) {
    }
  }
  Problem bad = random_case();
  bad.dt.pop_back();
  EXPECT_THROW(emulate_prefill(bad), ProblemError);
}

}  // namespace
}  // namespace ssmv::bound::mamba3
