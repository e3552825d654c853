// The SSU host twin against the certified MPFR reference (reference/reference.h) on small
// random problems: every y and every stored state within a provisional per-element bound
// derived below (verify/ will supply the rigorous one); slots nobody writes unchanged;
// per-token states equal the final state of the same request cut after that token.
//
// Provisional bound (u = 2^-24; docs/bounds.md "Sequential family", first order, doubled).
// Per token t of (request, head), with v = dt + dt_bias and exact δ_t, |δ_t A|:
//   Δδ/δ ≤ r_δ = 3.2u (softplus budget 1.6 ULP) + u·max(1, |v|) (the add, amplified by
//          v·σ(v)/softplus(v) ≤ max(1, |v|)) + u (nothing else: the clamp is exact)
//   Δa/a ≤ |δA|·(r_δ + u) + 2u (exp budget 1.0 ULP = 2u relative; the product δ·A)
//   ΔdB/dB ≤ r_δ + u;  the update S = fma(dB, x, fl(a·S)) adds 2u.
// Each term of the update is at most Sabs_t (reference magnitude: |a_t S_{t-1}| ≤
// a_t·Sabs_{t-1} ≤ Sabs_t, |δBx| ≤ Sabs_t), so step t adds c_t·u·Sabs_t with
//   c_t = |δA|·(r_δ/u + 1) + 2 + (r_δ/u + 1) + 2,
// and since decays are ≤ 1, E_T ≤ Σ_t c_t·u·Sabs_T ≤ T·c_max·u·Sabs_T.
// y (before output rounding), with M = |zσ(z)|·(Σ|C|·Sabs + |D·x|) the reference magnitude:
//   Σ|C|·E_T + (depth + 1)·u·(Σ|C|·|Ŝ| + |D·x|) (reduction chain + tree, depth from the
//   contract; the D fma) + 7u·M (gate: sigmoid 2.5 ULP = 5u, two products)
//   ≤ M·u·(T·c_max + depth + 8).
// Doubled for second-order terms and |Ŝ| ≤ Sabs + E; plus 2^-140 absolute for underflow;
// then half an ULP of the output format at |y| + bound for the final rounding.
// Stored states: 2·T·c_max·u·Sabs + half an ULP of the state format.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "fast/ssu/contract.h"
#include "fast/ssu/ssu.h"
#include "fast/ssu/twin.h"
#include "fast/ssu/tests/problem_gen.h"
#include "reference/reference.h"
#include "spec/format.h"

namespace ssmv::ssu::testing {
namespace {

constexpr double kU = 0x1p-24;

struct Checked {
  int64_t y_elements = 0, y_nonzero = 0, state_elements = 0;
  // Largest (|error| − ½ULP_out) / pre-rounding bound over y: how much of the arithmetic
  // part of the bound the twin uses (docs/bounds.md: judge tightness without the final rounding).
  double worst_arithmetic_use = 0;
};

// c_max over the tokens of request r, head h (see the derivation above).
double step_factor(const DecodeProblem& d, const ref::ExactResult& ex, int64_t r, int64_t h) {
  const Problem& pr = d.problem;
  double c_max = 0;
  for (int64_t t = pr.shape.cu_seqlens[r]; t < pr.shape.cu_seqlens[r + 1]; ++t) {
    const double v = double(pr.dt[pr.dt_index(t, h)]) + (pr.has_dt_bias() ? pr.dt_bias[h] : 0.0);
    const double r_delta = (pr.dt_softplus ? 3.2 : 0.0) + std::max(1.0, std::fabs(v)) + 1.0;
    const double dA = std::fabs(ex.delta[pr.dt_index(t, h)] * pr.A[h]);
    c_max = std::max(c_max, dA * (r_delta + 1) + 2 + (r_delta + 1) + 2);
  }
  return c_max;
}

void check_against_reference(const GeneratedProblem& g, Checked& out) {
  const DecodeProblem& d = g.decode;
  const Problem& pr = d.problem;
  const Shape& s = pr.shape;
  const Result twin = run_twin(d, g.config);
  const ref::ExactDecodeResult ex = ref::compute_decode(d);
  const int64_t depth = reduction_depth(contract().reductions.at(0), s.N);
  for (int64_t r = 0; r < s.num_sequences(); ++r) {
    const int64_t T = s.seq_len(r);
    for (int64_t h = 0; h < s.H; ++h) {
      const double c = step_factor(d, ex.result, r, h);
      for (int64_t t = s.cu_seqlens[r]; t < s.cu_seqlens[r + 1]; ++t) {
        for (int64_t p = 0; p < s.P; ++p) {
          const int64_t i = pr.x_index(t, h, p);
          const double exact = ex.result.y.nearest[i];
          const double pre = 2 * ex.result.y.magnitude[i] * kU * (double(T) * c + double(depth) + 8) + 0x1p-140;
          const double bound = pre + 0.5 * ulp_of(pr.formats.output, std::fabs(exact) + pre);
          const double got = decode(pr.formats.output, twin.y[i]);
          ASSERT_LE(std::fabs(got - exact), bound)
              << g.description << "\n y[t=" << t << ", h=" << h << ", p=" << p << "] twin " << std::hexfloat << got
              << " exact " << exact << " bound " << bound;
          ++out.y_elements;
          out.y_nonzero += got != 0;
          const double half_ulp = 0.5 * ulp_of(pr.formats.output, std::fabs(got));
          out.worst_arithmetic_use = std::max(out.worst_arithmetic_use, (std::fabs(got - exact) - half_ulp) / pre);
        }
      }
      if (d.is_pad(r)) continue;
      const int64_t slot = d.out_slot(r);
      for (int64_t p = 0; p < s.P; ++p) {
        for (int64_t n = 0; n < s.N; ++n) {
          const int64_t i = ((slot * s.H + h) * s.P + p) * s.N + n;
          const double exact = ex.state_pool.nearest[i];
          const double e = 2 * double(T) * c * kU * ex.state_pool.magnitude[i] + 0x1p-140;
          const double bound = e + 0.5 * ulp_of(pr.formats.state, std::fabs(exact) + e);
          const double got = decode(pr.formats.state, twin.state_pool[i]);
          ASSERT_LE(std::fabs(got - exact), bound)
              << g.description << "\n state[slot=" << slot << ", h=" << h << ", p=" << p << ", n=" << n << "] twin "
              << std::hexfloat << got << " exact " << exact << " bound " << bound;
          ++out.state_elements;
        }
      }
    }
  }
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

TEST(SsuTwin, WithinProvisionalBoundOfReference_RandomConfigs) {
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
  std::printf("[ssu twin] %lld y elements, worst (|err| - half ULP) / arithmetic bound = %.3g\n",
              (long long)total.y_elements, total.worst_arithmetic_use);
}

TEST(SsuTwin, WithinProvisionalBoundOfReference_Fp32Everything_MultiToken) {
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
  // fp32 output: the arithmetic part shows (not hidden under a bf16 rounding).
  EXPECT_GT(k.worst_arithmetic_use, 0.0);
  std::printf("[ssu twin fp32] worst (|err| - half ULP) / arithmetic bound = %.3g\n", k.worst_arithmetic_use);
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
  const Result full = run_twin(g.decode, g.config);
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
      auto slice = [&](const std::vector<float>& v, int64_t per_token) {
        return std::vector<float>(v.begin() + t0 * per_token, v.begin() + (t0 + len) * per_token);
      };
      pr.x = slice(g.decode.problem.x, s.H * s.P);
      pr.z = !g.decode.problem.has_z() ? std::vector<float>{} : slice(g.decode.problem.z, s.H * s.P);
      pr.dt = slice(g.decode.problem.dt, s.H);
      pr.B = slice(g.decode.problem.B, s.G * s.N);
      pr.C = slice(g.decode.problem.C, s.G * s.N);
      pr.shape.cu_seqlens = {0, len};
      cut.slot_in = {g.decode.slot_in[r]};
      cut.slot_out = {g.decode.out_slot(r)};
      const Result part = run_twin(cut);
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
