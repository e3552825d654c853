// Identities the reference must satisfy: A = 0 gives prefix sums, x = 0 gives pure
// decay, D only, the z gate, the group mapping, varlen packing, the prefill hand-off,
// and streaming = compute.
#include <gtest/gtest.h>

#include <atomic>

#include "reference/reference.h"
#include "reference/tests/reference_test_util.h"

namespace ssmv::ref {
namespace {

using testing::close_to;
using testing::identical;
using testing::Mp;
using testing::random_problem;
using testing::same_element;
using testing::within_certified;
using testing::zero_problem;

// A = 0, no softplus: a = exp(0) = 1 and δ = dt exactly, so S_t = Σ_{k<=t} dt_k·B_k·x_k, a
// prefix sum. With small dyadic inputs every product and sum is exact:
// the values equal the prefix sums computed in double and the certified error is 0.
TEST(ReferenceIdentity, ZeroAGivesExactPrefixSums) {
  const int64_t T = 5, P = 2, N = 3;
  Problem pr = zero_problem({0, T}, 1, P, N, 1);
  for (int64_t t = 0; t < T; ++t) {
    pr.dt.set(t, 0.25f * float(t + 1));
    for (int64_t n = 0; n < N; ++n) {
      pr.B.set(pr.bc_index(t, 0, n), float(n + 1) - float(t));
      pr.C.set(pr.bc_index(t, 0, n), 0.5f * float((t + n) % 3) - 0.5f);
    }
    for (int64_t p = 0; p < P; ++p) pr.x.set(pr.x_index(t, 0, p), float(p) + 1.5f - float(t % 2));
  }
  const ExactResult r = compute(pr, testing::mpfr_tier());
  std::vector<double> S(P * N, 0.0);
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t p = 0; p < P; ++p) {
      double y = 0;
      for (int64_t n = 0; n < N; ++n) {
        S[p * N + n] += double(pr.dt[t]) * pr.B[pr.bc_index(t, 0, n)] * pr.x[pr.x_index(t, 0, p)];
        y += pr.C[pr.bc_index(t, 0, n)] * S[p * N + n];
      }
      const size_t i = pr.x_index(t, 0, p);
      EXPECT_EQ(r.y.nearest[i], y) << "t " << t << " p " << p;
      EXPECT_EQ(mpfr_cmp_d(r.y.value[i].backend().data(), y), 0);
      EXPECT_EQ(r.y.certified_error[i], 0.0);
    }
    EXPECT_EQ(r.decay[t], 1.0);
  }
  for (int64_t i = 0; i < P * N; ++i) EXPECT_EQ(r.final_state.nearest[i], S[i]);
}

// x = 0: S_t = a^t·h0 with a = exp(δA); y_t = Σ_n C_n·a^t·h0_n. Checked at every token
// through state_positions against exp(t·δ·A)·h0 computed here.
TEST(ReferenceIdentity, ZeroInputIsPureDecayOfTheInitialState) {
  const int64_t T = 4, P = 2, N = 2;
  Problem pr = zero_problem({0, T}, 1, P, N, 1);
  pr.dt.assign(T, 0.375f);
  pr.A = {-1.5f};
  pr.B.assign(T * N, 1.0f);  // would add to S if x were not 0
  pr.C.assign(T * N, 1.0f);
  pr.initial_state = {1.0f, -2.0f, 0.5f, 3.0f};
  Options o = testing::mpfr_tier();
  o.state_positions = {1, 2, 3, 4};
  const ExactResult r = compute(pr, o);
  for (int64_t t = 1; t <= T; ++t) {
    Mp decay(0.375 * -1.5 * double(t));  // exact in double
    mpfr_exp(decay.get(), decay.get(), MPFR_RNDN);
    for (int64_t i = 0; i < P * N; ++i) {
      Mp expected;
      mpfr_mul_d(expected.get(), decay.get(), pr.initial_state[i], MPFR_RNDN);
      EXPECT_TRUE(close_to(r.states_at[t - 1].state, i, expected.get(), 120)) << "t " << t;
    }
  }
  EXPECT_TRUE(identical(r.states_at[T - 1].state, r.final_state));
}

// D only: with B = 0 and no initial state, S stays 0 and y = D·x exactly (fp32 × fp32 is
// exact at 127 bits); D per (head, dim). With C = 0 instead, S grows but y = D·x still.
TEST(ReferenceIdentity, DOnlyGivesExactSkipConnection) {
  for (const bool zero_b : {true, false}) {
    Problem pr = random_problem({0, 3}, 2, 3, 4, 1, 7, /*with_initial_state=*/false);
    pr.z.clear();
    pr.D = {0.5f, -1.25f, 3.0f, 0.125f, -7.0f, 1.0f};  // [H = 2, P = 3]
    (zero_b ? pr.B : pr.C).assign(pr.B.size(), 0.0f);
    const ExactResult r = compute(pr, testing::mpfr_tier());
    for (int64_t t = 0; t < 3; ++t) {
      for (int64_t h = 0; h < 2; ++h) {
        for (int64_t p = 0; p < 3; ++p) {
          const size_t i = pr.x_index(t, h, p);
          const double dx = double(pr.D[h * 3 + p]) * double(pr.x[i]);
          EXPECT_EQ(r.y.nearest[i], dx);
          EXPECT_EQ(mpfr_cmp_d(r.y.value[i].backend().data(), dx), 0);
          EXPECT_EQ(r.abs_Dx[i], std::fabs(dx));
          EXPECT_EQ(r.y.certified_error[i], 0.0);
        }
      }
    }
    bool state_nonzero = false;
    for (double v : r.final_state.nearest) state_nonzero |= v != 0.0;
    EXPECT_EQ(state_nonzero, !zero_b);
  }
}

// The gate multiplies the ungated output by z·σ(z): y(with z) = y(without z)·z/(1 + e^-z),
// checked against the ungated run's values: the two differ by at most their certified
// errors (the ungated one scaled by |g|) and the 400-bit rounding of the expected value.
TEST(ReferenceIdentity, GateMultipliesByZSigmoidZ) {
  const Problem gated = random_problem({0, 3}, 2, 2, 3, 1, 11, true);
  Problem ungated = gated;
  ungated.z.clear();
  const ExactResult rg = compute(gated, testing::mpfr_tier()), ru = compute(ungated, testing::mpfr_tier());
  for (size_t i = 0; i < gated.z.size(); ++i) {
    Mp g(-double(gated.z[i]));
    mpfr_exp(g.get(), g.get(), MPFR_RNDN);
    mpfr_add_ui(g.get(), g.get(), 1, MPFR_RNDN);
    mpfr_d_div(g.get(), double(gated.z[i]), g.get(), MPFR_RNDN);
    Mp expected;
    mpfr_mul(expected.get(), ru.y.value[i].backend().data(), g.get(), MPFR_RNDN);
    const double g_abs = std::fabs(mpfr_get_d(g.get(), MPFR_RNDA));
    EXPECT_TRUE(within_certified(rg.y, i, expected.get(), ru.y.certified_error[i] * g_abs * (1 + 0x1p-50)));
    EXPECT_EQ(rg.y_ungated[i], ru.y.nearest[i]);
  }
  EXPECT_TRUE(identical(rg.final_state, ru.final_state));  // the gate does not touch S
}

// Groups: H = 4, G = 2, so heads {0, 1} read group 0 and {2, 3} group 1. The result
// equals, bit for bit, a G = H problem whose B and C repeat each group's row per head.
TEST(ReferenceIdentity, GroupMappingEqualsRepeatedBC) {
  const int64_t H = 4, G = 2, P = 2, N = 3, T = 3;
  const Problem grouped = random_problem({0, T}, H, P, N, G, 13, true);
  Problem per_head = grouped;
  per_head.shape.G = H;
  per_head.B.assign(T * H * N, 0.0f);
  per_head.C.assign(T * H * N, 0.0f);
  for (int64_t t = 0; t < T; ++t)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t n = 0; n < N; ++n) {
        per_head.B.set(per_head.bc_index(t, h, n), grouped.B[grouped.bc_index(t, h / (H / G), n)]);
        per_head.C.set(per_head.bc_index(t, h, n), grouped.C[grouped.bc_index(t, h / (H / G), n)]);
      }
  testing::expect_identical(compute(grouped), compute(per_head));

  // And heads of one group with the same per-head inputs give the same outputs.
  Problem twins = grouped;
  for (FormatValues* v : {&twins.dt, &twins.x, &twins.z}) v->loosen();  // edited
  for (int64_t t = 0; t < T; ++t) {
    twins.dt.set(twins.dt_index(t, 1), twins.dt[twins.dt_index(t, 0)]);
    for (int64_t p = 0; p < P; ++p) {
      twins.x.set(twins.x_index(t, 1, p), twins.x[twins.x_index(t, 0, p)]);
      twins.z.set(twins.x_index(t, 1, p), twins.z[twins.x_index(t, 0, p)]);
      twins.x.set(twins.x_index(t, 2, p), twins.x[twins.x_index(t, 0, p)]);
    }
  }
  twins.A[1] = twins.A[0];
  twins.dt_bias[1] = twins.dt_bias[0];
  twins.D[1] = twins.D[0];
  for (int64_t i = 0; i < P * N; ++i) twins.initial_state[P * N + i] = twins.initial_state[i];
  const ExactResult r = compute(twins);
  for (int64_t t = 0; t < T; ++t)
    for (int64_t p = 0; p < P; ++p)
      EXPECT_TRUE(same_element(r.y, twins.x_index(t, 0, p), r.y, twins.x_index(t, 1, p)));
  // Head 2 has head 0's x but group 1's B and C: not a twin (the mapping is not vacuous).
  EXPECT_NE(r.y.nearest[twins.x_index(T - 1, 0, 0)], r.y.nearest[twins.x_index(T - 1, 2, 0)]);
}

// Sequences packed together (varlen over cu_seqlens) equal each sequence alone, bit for
// bit: y, the final states and a requested state inside each sequence.
TEST(ReferenceIdentity, PackedSequencesEqualEachAlone) {
  const std::vector<int64_t> cu = {0, 3, 4, 8};
  const int64_t H = 2, P = 2, N = 3, G = 1;
  const Problem packed = random_problem(cu, H, P, N, G, 17, true);
  Options o;
  o.state_positions = {2, 4, 6};
  const ExactResult rp = compute(packed, o);
  for (int64_t s = 0; s < 3; ++s) {
    const int64_t L = cu[s + 1] - cu[s];
    Problem alone = zero_problem({0, L}, H, P, N, G);
    alone.formats = packed.formats;
    alone.dt_softplus = packed.dt_softplus;
    alone.A = packed.A;
    alone.dt_bias = packed.dt_bias;
    alone.D = packed.D;
    auto slice = [](const auto& v, int64_t from, int64_t count) {
      return std::vector<float>(v.begin() + from, v.begin() + from + count);
    };
    alone.x = slice(packed.x, cu[s] * H * P, L * H * P);
    alone.z = slice(packed.z, cu[s] * H * P, L * H * P);
    alone.dt = slice(packed.dt, cu[s] * H, L * H);
    alone.B = slice(packed.B, cu[s] * G * N, L * G * N);
    alone.C = slice(packed.C, cu[s] * G * N, L * G * N);
    alone.initial_state = slice(packed.initial_state, s * H * P * N, H * P * N);
    Options oa;
    for (int64_t q : o.state_positions)
      if (q > cu[s] && q <= cu[s + 1]) oa.state_positions.push_back(q - cu[s]);
    const ExactResult ra = compute(alone, oa);
    for (int64_t i = 0; i < L * H * P; ++i) EXPECT_TRUE(same_element(rp.y, cu[s] * H * P + i, ra.y, i));
    for (int64_t i = 0; i < H * P * N; ++i)
      EXPECT_TRUE(same_element(rp.final_state, s * H * P * N + i, ra.final_state, i));
    for (size_t k = 0, ka = 0; k < o.state_positions.size(); ++k) {
      if (rp.states_at[k].sequence != s) continue;
      EXPECT_TRUE(identical(rp.states_at[k].state, ra.states_at[ka++].state));
    }
  }
}

// Prefill [0,k) then [k,T) from the handed-over full-precision state equals [0,T): the
// continuation starts from the state the first part computed, so value, nearest and
// magnitude are bit-identical (only certified_error may differ). Handing over a state
// rounded to the state format could not be exact; that is the kernels' business.
TEST(ReferenceIdentity, PrefillThenContinuationEqualsWholePrefill) {
  const int64_t T = 6, k = 4, H = 2, P = 2, N = 3;
  const Problem whole = random_problem({0, T}, H, P, N, 1, 19, true);
  Options o;
  o.state_positions = {k};
  const ExactResult rw = compute(whole, o);

  auto part = [&](int64_t from, int64_t to) {
    Problem p = whole;
    const int64_t L = to - from;
    p.shape.cu_seqlens = {0, L};
    auto slice = [&](const auto& v, int64_t per_token) {
      return std::vector<float>(v.begin() + from * per_token, v.begin() + to * per_token);
    };
    p.x = slice(whole.x, H * P);
    p.z = slice(whole.z, H * P);
    p.dt = slice(whole.dt, H);
    p.B = slice(whole.B, N);
    p.C = slice(whole.C, N);
    return p;
  };
  const ExactResult r1 = compute(part(0, k));
  Problem rest = part(k, T);
  rest.initial_state.clear();
  const ExactResult r2 = compute_from_state(rest, r1.final_state);

  EXPECT_TRUE(identical(r1.final_state, rw.states_at[0].state));
  for (int64_t i = 0; i < (T - k) * H * P; ++i) EXPECT_TRUE(same_element(rw.y, k * H * P + i, r2.y, i));
  for (size_t i = 0; i < rw.final_state.size(); ++i)
    EXPECT_TRUE(same_element(rw.final_state, i, r2.final_state, i));
}

// Whether a handed-over value, as an MPFR number of its precision, equals w.
bool same_value(const HandedValue& v, mpfr_srcptr w) {
  mpfr_t t;
  mpfr_init2(t, precision(v));
  set_value(t, v);
  const bool same = mpfr_get_prec(t) == mpfr_get_prec(w) && mpfr_equal_p(t, w);
  mpfr_clear(t);
  return same;
}

// compute_streaming() hands over exactly what compute() keeps, token by token.
TEST(ReferenceIdentity, StreamingEqualsCompute) {
  const Problem pr = random_problem({0, 2, 5}, 2, 2, 3, 1, 23, true);
  const ExactResult r = compute(pr);
  struct Check : Sink {
    const Problem* pr;
    const ExactResult* r;
    std::atomic<int> tokens{0}, states{0}, mismatches{0};
    void token(const TokenOutputs& o) override {
      ++tokens;
      for (int64_t p = 0; p < pr->shape.P; ++p) {
        const size_t i = pr->x_index(o.token, o.head, p);
        if (!same_value(o.y[p], r->y.value[i].backend().data()) || o.y_nearest[p] != r->y.nearest[i] ||
            o.y_magnitude[p] != r->y.magnitude[i])
          ++mismatches;
      }
    }
    void state(const StateOutputs& o) override {
      ++states;
      const int64_t pn = pr->shape.P * pr->shape.N;
      for (int64_t i = 0; i < pn; ++i) {
        const size_t j = size_t(pr->state_index(o.sequence, o.head, 0, 0) + i);
        if (!o.final || !same_value(o.value[i], r->final_state.value[j].backend().data())) ++mismatches;
      }
    }
  } sink;
  sink.pr = &pr;
  sink.r = &r;
  Options o;
  o.threads = 2;
  compute_streaming(pr, sink, o);
  EXPECT_EQ(sink.tokens.load(), 5 * 2);  // T·H
  EXPECT_EQ(sink.states.load(), 2 * 2);  // S·H final states
  EXPECT_EQ(sink.mismatches.load(), 0);
}

}  // namespace
}  // namespace ssmv::ref
