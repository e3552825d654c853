// The SSU host twin against the certified MPFR reference (reference/reference.h) on small
// random problems, judged by verify's bound of the SSU contract (verify/run/kernel_check.h
// judge_ssu: every y and every pool element, slots nobody writes with bound 0); slots
// nobody writes keep their bits; per-token states equal the final state of the same
// request cut after that token.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "fast/ssu/ssu.h"
#include "fast/ssu/tests/problem_gen.h"
#include "reference/reference.h"
#include "spec/format.h"
#include "verify/reports/gtest_contract.h"
#include "verify/run/kernel_check.h"

namespace ssmv::ssu::testing {
namespace {

struct Checked {
  int64_t y_elements = 0, y_nonzero = 0, state_elements = 0;
  double worst_y_usage = 0;  // largest error / bound over y
};

void check_against_reference(const GeneratedProblem& g, Checked& out) {
  const DecodeProblem& d = g.decode;
  const Problem& pr = d.problem;
  const Shape& s = pr.shape;
  const Result twin = run(d, Device::twin, g.config);
  const verify::KernelCheck kc = verify::judge_ssu(d, ref::compute_decode(d), twin, "ssu", "twin");
  ASSERT_WITHIN_CONTRACT(kc) << g.description;
  ASSERT_EQ(kc.tensors.size(), 2u);
  out.y_elements += kc.tensors[0].elements;
  out.state_elements += kc.tensors[1].elements;
  out.worst_y_usage = std::max(out.worst_y_usage, kc.tensors[0].max_bound_usage);
  for (const Bits b : twin.y) out.y_nonzero += decode(pr.formats.output, b) != 0;
  // Slots nobody writes keep their bits.
  std::vector<bool> written(d.slots, false);
  for (int64_t r = 0; r < s.num_sequences(); ++r)
    if (!d.is_pad(r)) written[d.out_slot(r)] = true;
  for (int64_t q = 0; q < int64_t(g.config.token_state_slots.size()); ++q) {
    const int64_t slot = g.config.token_state_slots[q];
    if (slot != d.pad_slot_id) written[slot] = true;  // at most: pad requests write none
  }
  const int64_t row = s.H * s.P * s.N;
  for (int64_t slot = 0; slot < d.slots; ++slot) {
    if (written[slot]) continue;
    for (int64_t i = slot * row; i < (slot + 1) * row; ++i) {
      ASSERT_EQ(twin.state_pool[i], round_nearest_even(pr.formats.state, d.state_pool[i]))
          << g.description << ": unwritten slot " << slot << " changed";
    }
  }
}

TEST(SsuTwin, WithinContractOfReference_RandomConfigs) {
  Checked total;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    ProblemConfig c = random_config(seed);
    c.token_states = false;  // compared separately below (the reference has no per-token slots)
    // Small enough for the reference (a few ms each).
    c.P = std::min<int64_t>(c.P, 9);
    c.N = std::min<int64_t>(c.N, 40);
    check_against_reference(make_problem(c, seed), total);
    if (HasFatalFailure()) return;
  }
  EXPECT_GT(total.y_nonzero, total.y_elements / 2);  // not vacuous
  EXPECT_GT(total.state_elements, 1000);
  std::printf("[ssu twin] %lld y elements, worst error / bound = %.3g\n", (long long)total.y_elements,
              total.worst_y_usage);
}

TEST(SsuTwin, WithinContractOfReference_Fp32Everything_MultiToken) {
  ProblemConfig c;
  c.requests = 3;
  c.max_tokens = 6;
  c.H = 2;
  c.P = 5;
  c.N = 70;  // V = 2, J = 2: two chunks per lane, lanes 0..2 hold a partial second chunk
  c.formats = {Format::fp32, Format::fp32, Format::fp32};
  c.d_mode = DMode::per_head_dim;
  c.pad_fraction = 0.3;
  c.separate_out = true;
  Checked k;
  check_against_reference(make_problem(c, 77), k);
  EXPECT_GT(k.y_nonzero, 0);
  // fp32 output: the arithmetic part of the bound shows (not hidden under a bf16 rounding).
  EXPECT_GT(k.worst_y_usage, 0.0);
  std::printf("[ssu twin fp32] worst error / bound = %.3g\n", k.worst_y_usage);
}
// The state after token q stored to its per-token slot equals the final state of the same
// request with its tokens cut after q (speculative decoding: accept a prefix).
TEST(SsuTwin, TokenStatesEqualFinalStatesOfCutRequests) {
  ProblemConfig c;
  c.requests = 2;
  c.max_tokens = 4;
  c.H = 2;
  c.P = 3;
  c.N = 33;
  c.formats = {Format::bf16, Format::bf16, Format::bf16};
  c.token_states = true;
  c.separate_out = true;
  const GeneratedProblem g = make_problem(c, 5);
  const Result full = run(g.decode, Device::twin, g.config);
  const Shape& s = g.decode.problem.shape;
  const int64_t row = s.H * s.P * s.N;
  int64_t compared = 0;
  for (int64_t r = 0; r < s.num_sequences(); ++r) {
    for (int64_t q = s.cu_seqlens[r]; q < s.cu_seqlens[r + 1]; ++q) {
      const int64_t slot = g.config.token_state_slots[q];
      if (slot == g.decode.pad_slot_id) continue;
      // Request r alone, tokens [cu[r], q].
      DecodeProblem cut = g.decode;
      Problem& pr = cut.problem;
      const int64_t t0 = s.cu_seqlens[r], len = q - t0 + 1;
      auto slice = [&](const auto& v, int64_t per_token) {
        return std::vector<float>(v.begin() + t0 * per_token, v.begin() + (t0 + len) * per_token);
      };
      pr.x = slice(g.decode.problem.x, s.H * s.P);
      pr.z = !g.decode.problem.has_z() ? FormatValues{} : slice(g.decode.problem.z, s.H * s.P);
      pr.dt = slice(g.decode.problem.dt, s.H);
      pr.B = slice(g.decode.problem.B, s.G * s.N);
      pr.C = slice(g.decode.problem.C, s.G * s.N);
      pr.shape.cu_seqlens = {0, len};
      cut.slot_in = {g.decode.slot_in[r]};
      cut.slot_out = {g.decode.out_slot(r)};
      const Result part = run(cut, Device::twin);
      const int64_t out = g.decode.out_slot(r);
      for (int64_t i = 0; i < row; ++i) {
        ASSERT_EQ(full.state_pool[slot * row + i], part.state_pool[out * row + i]) << "token " << q << " element " << i;
        ++compared;
      }
    }
  }
  EXPECT_GT(compared, 0);
}

}  // namespace
}  // namespace ssmv::ssu::testing
