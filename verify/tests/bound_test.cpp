// The bounds of verify/bound/ on small closed-form cases: the chunk layouts, the
// final_incoming_state rounding point (docs/bounds.md §3), and the split of a bound over
// its sources (attribution.h, docs/bounds.md §5).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <filesystem>
#include <span>
#include <stdexcept>
#include <string>

#include "fast/chunk_scan/contract.h"
#include "reference/reference.h"
#include "spec/realistic_problem.h"
#include "verify/bound/attribution.h"
#include "verify/bound/chunked_bound.h"
#include "verify/bound/error_model.h"
#include "verify/bound/sequential_bound.h"
#include "verify/bound/tagged.h"
#include "verify/contracts/contract_json.h"
#include "verify/run/kernel_check.h"

namespace ssmv::verify {
namespace {

Contract chunked(chunk_scan::ContractKind kind, int64_t L, ChunkLayout layout) {
  Contract c = chunk_scan::contract(kind, L);
  c.chunk_layout = layout;
  return c;
}

void expect_identical(const std::vector<double>& a, const std::vector<double>& b, const char* what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i], b[i]) << what << "[" << i << "]";
}

// Every sequence starts at a multiple of the chunk size: the global chunks are the
// sequences' own chunks, so both layouts give the same bounds bit for bit.
TEST(ChunkLayout, GlobalEqualsSequenceWhenSequencesStartOnChunkBoundaries) {
  const Shape s{{0, 16, 24, 29}, 2, 4, 16, 1};  // L = 8: starts 0, 16, 24
  const Problem p = realistic_problem(s, Formats{Format::bf16, Format::fp32, Format::bf16}, 31);
  const ref::ExactResult exact = ref::compute(p);
  for (auto kind : {chunk_scan::ContractKind::production, chunk_scan::ContractKind::fp32}) {
    const bound::ChunkedBounds a = chunked_bounds_for(p, chunked(kind, 8, ChunkLayout::sequence), exact);
    const bound::ChunkedBounds b = chunked_bounds_for(p, chunked(kind, 8, ChunkLayout::global), exact);
    expect_identical(a.y, b.y, "y");
    expect_identical(a.final_state, b.final_state, "final_state");
    expect_identical(a.boundary_state, b.boundary_state, "boundary_state");
    EXPECT_EQ(a.boundary_positions, b.boundary_positions);
  }
}

// Sequence 1 starts mid-chunk (token 5 of chunk [0, 8)): under the global layout its
// first piece's cumulative sums run from token 0, through sequence 0's tokens, whose
// δ·A errors and magnitudes then enter every decay of sequence 1's tokens 5..7. Sequence 0
// (tokens 0..4, the start of the same chunk in both layouts) is bounded identically.
TEST(ChunkLayout, GlobalCumsumErrorReachesASequenceStartingMidChunk) {
  const Shape s{{0, 5, 12}, 1, 4, 16, 1};
  RealisticOptions o;
  o.initial_state = true;
  Problem p = realistic_problem(s, Formats{Format::bf16, Format::fp32, Format::bf16}, 7, o);
  // A long δ in sequence 0 makes its |cs| (and so its rounding errors) large.
  p.dt.loosen();
  for (int64_t t = 0; t < 5; ++t) p.dt.set(p.dt_index(t, 0), 2.0f);
  const ref::ExactResult exact = ref::compute(p);
  const Contract seq = chunked(chunk_scan::ContractKind::fp32, 8, ChunkLayout::sequence);
  const Contract glo = chunked(chunk_scan::ContractKind::fp32, 8, ChunkLayout::global);
  const bound::ChunkedBounds a = chunked_bounds_for(p, seq, exact), b = chunked_bounds_for(p, glo, exact);
  const int64_t HP = s.H * s.P;
  for (int64_t i = 0; i < 5 * HP; ++i) EXPECT_EQ(a.y[i], b.y[i]) << "sequence 0, y[" << i << "]";
  for (int64_t t = 5; t < 8; ++t) {
    for (int64_t i = 0; i < HP; ++i) {
      EXPECT_GT(b.y[t * HP + i], a.y[t * HP + i]) << "sequence 1, token " << t << ", element " << i;
    }
  }
  // Pieces: sequence 1 is [5, 8) and [8, 12) globally, one chunk [5, 12) by sequence.
  EXPECT_EQ(a.boundary_positions, (std::vector<int64_t>{5, 12}));
  EXPECT_EQ(b.boundary_positions, (std::vector<int64_t>{5, 8, 12}));
}

// final_incoming_state in bf16 on a one-piece sequence: the state entering the last piece is
// the exact initial state h0 (no error), so the final state's fp32 bound grows by
// exp(cs_last)·u_bf16·|h0| to first order (docs/bounds.md [3.11]), times kSafetyFactor.
TEST(FinalIncomingState, BoundGrowsByTheRoundedIncomingStateTimesItsDecay) {
  const Shape s{{0, 6}, 1, 2, 8, 1};
  const Problem p = realistic_problem(s, Formats{Format::bf16, Format::fp32, Format::bf16}, 11);
  const ref::ExactResult exact = ref::compute(p);
  Contract plain = chunked(chunk_scan::ContractKind::fp32, 8, ChunkLayout::global);
  Contract rounded = plain;
  rounded.roundings.push_back({Point::final_incoming_state, FormatRef::bf16});
  const bound::ChunkedBounds a = chunked_bounds_for(p, plain, exact), b = chunked_bounds_for(p, rounded, exact);
  double cs = 0;
  for (int64_t t = 0; t < 6; ++t) cs += exact.delta[p.dt_index(t, 0)] * double(p.A[0]);
  const double decay = std::exp(cs), u_bf16 = 0x1p-8;
  for (size_t i = 0; i < a.final_state_fp32.size(); ++i) {
    const double h0 = std::fabs(double(p.initial_state[i]));
    ASSERT_GT(h0, 0) << i;
    const double expected = decay * u_bf16 * h0 * bound::kSafetyFactor;
    const double growth = b.final_state_fp32[i] - a.final_state_fp32[i];
    EXPECT_GE(growth, expected * (1 - 1e-9)) << i;
    EXPECT_LE(growth, expected * (1 + 1e-4)) << i;
  }
  // y and the boundary states do not read it.
  expect_identical(a.y, b.y, "y");
  expect_identical(a.boundary_state, b.boundary_state, "boundary_state");
}

}  // namespace
}  // namespace ssmv::verify

namespace ssmv::verify {
namespace {

// Σ shares = 1 and Σ parts = the full bound's value at the element (the split is exact:
// every term belongs to one source; only the double rounding of the sums differs).
void expect_exact_split(const bound::Attribution& a, double full, const std::string& what) {
  ASSERT_GT(full, 0) << what;
  EXPECT_NEAR(a.bound, full, 1e-12 * full) << what;
  double sum = 0, prev = HUGE_VAL;
  for (const bound::SourceShare& s : a.shares) {
    sum += s.share;
    EXPECT_GT(s.value, 0) << what << " " << s.label;
    EXPECT_LE(s.value, prev) << what << ": largest first";
    prev = s.value;
  }
  EXPECT_NEAR(sum, 1.0, 1e-12) << what;
}

double share_of(const bound::Attribution& a, bound::BoundSource s) {
  for (const bound::SourceShare& x : a.shares) {
    if (x.source == s) return x.share;
  }
  return 0;
}

// Half a bf16 ULP at |v| (the bound's own kSafetyFactor multiplies it, hence the test's 0.5).
double half_ulp_at_most_bf16(double v) { return bound::half_ulp_at_most(Format::bf16, v); }

bound::SequentialInput sequential_input(const Problem& p, const Contract& c, const ref::ExactResult& exact) {
  return sequential_input_for(p, c, exact, /*tokens_per_launch=*/0);
}

// A bf16 state stored once after fp32 updates: half a bf16 ULP (2^-9 relative) against a
// few fp32 roundings per token (~2^-22 relative): stored_state carries > 90 % of the bound.
TEST(Attribution, Bf16StoredStateDominatesAnFp32Update) {
  const Shape s{{0, 6}, 2, 4, 16, 1};
  const Problem p = realistic_problem(s, Formats{Format::bf16, Format::bf16, Format::fp32}, 5);
  const ref::ExactResult exact = ref::compute(p);
  const Contract c = contract_preset("ssu", 0);
  const bound::SequentialInput in = sequential_input(p, c, exact);
  const bound::SequentialBounds full = bound::sequential_bounds(in);
  for (int64_t i : {int64_t(0), int64_t(37), int64_t(s.H * s.P * s.N - 1)}) {
    const bound::Attribution a = bound::attribute_sequential(in, bound::BoundOf::stored_state, i);
    expect_exact_split(a, full.stored_state[i], "stored_state[" + std::to_string(i) + "]");
    EXPECT_GT(share_of(a, bound::BoundSource::stored_state), 0.9) << i;
    EXPECT_EQ(a.shares.front().label, "stored_state (bf16)");
  }
}

// dt_softplus under the documented Triton contract (softplus budget 4 + 0.7|x| ULP plus
// 2^-24 absolute): the softplus budget has a part of every y bound; sigmoid too (z).
TEST(Attribution, SoftplusBudgetHasAShareWithDtSoftplus) {
  const Shape s{{0, 3}, 2, 4, 32, 1};
  const Problem p = realistic_problem(s, Formats{Format::bf16, Format::bf16, Format::bf16}, 9);
  ASSERT_TRUE(p.dt_softplus);
  const ref::ExactResult exact = ref::compute(p);
  const Contract c = load_contract((std::filesystem::path(__FILE__).parent_path() /
                                    "../../docs/examples/contract-example.json").string(), 0);
  const bound::SequentialInput in = sequential_input(p, c, exact);
  const bound::SequentialBounds full = bound::sequential_bounds(in);
  for (int64_t i = 0; i < int64_t(full.y.size()); i += 5) {
    const bound::Attribution a = bound::attribute_sequential(in, bound::BoundOf::y, i);
    expect_exact_split(a, full.y[i], "y[" + std::to_string(i) + "]");
    EXPECT_GT(share_of(a, bound::BoundSource::softplus), 0) << i;
    EXPECT_GT(share_of(a, bound::BoundSource::sigmoid), 0) << i;
    EXPECT_GT(share_of(a, bound::BoundSource::output), 0) << i;
  }
  // Without the problem's softplus there is no softplus part.
  RealisticOptions o;
  o.dt_softplus = false;
  const Problem q = realistic_problem(s, Formats{Format::bf16, Format::bf16, Format::bf16}, 9, o);
  const ref::ExactResult eq = ref::compute(q);
  const bound::Attribution a = bound::attribute_sequential(sequential_input(q, c, eq), bound::BoundOf::y, 0);
  EXPECT_EQ(share_of(a, bound::BoundSource::softplus), 0);
}

// Contract::softplus_shortcut is read by both bounds: with softplus(v) = v for v > 20
// declared, δ's error gains the shortcut's own error e^-max(20, v − Δv) (docs/bounds.md
// [2.2]) where v = dt + dt_bias exceeds 20, and nothing where it does not. dt = 24 on every
// token: the state bounds with the shortcut are above those without it; with dt shifted
// down by 30 (v < 0 throughout) they are equal.
TEST(SoftplusShortcut, IsBoundedWhereVExceedsTwentyAndOnlyThere) {
  const Shape s{{0, 4}, 1, 2, 4, 1};
  for (double shift : {0.0, -30.0}) {
    Problem p = realistic_problem(s, Formats{Format::fp32, Format::fp32, Format::fp32}, 11);
    ASSERT_TRUE(p.dt_softplus);
    p.dt.loosen();  // edited
    for (float& dt : p.dt.writable()) dt = float(24.0 + shift - (p.has_dt_bias() ? p.dt_bias[0] : 0.0f));
    p.A.assign(p.A.size(), -0.5f);  // decay e^-12 per token: exp's argument inside every budget's range
    p.dt_limit_lo = 0.0f;
    p.dt_limit_hi = INFINITY;
    const ref::ExactResult exact = ref::compute(p);
    Contract with = contract_preset("ssu", 0), without = with;
    with.softplus_shortcut = true;
    without.softplus_shortcut = false;
    const bound::SequentialBounds a = bound::sequential_bounds(sequential_input(p, with, exact));
    const bound::SequentialBounds b = bound::sequential_bounds(sequential_input(p, without, exact));
    Contract cw = chunked(chunk_scan::ContractKind::fp32, 64, ChunkLayout::sequence), cn = cw;
    cw.softplus_shortcut = true;
    cn.softplus_shortcut = false;
    const bound::ChunkedBounds ca = bound::chunked_bounds(chunked_input_for(p, cw, exact));
    const bound::ChunkedBounds cb = bound::chunked_bounds(chunked_input_for(p, cn, exact));
    for (size_t i = 0; i < a.state.size(); ++i) {
      if (shift == 0.0) {
        EXPECT_GT(a.state[i], b.state[i]) << i;
        EXPECT_GT(ca.final_state_fp32[i], cb.final_state_fp32[i]) << i;
      } else {
        EXPECT_EQ(a.state[i], b.state[i]) << i;
        EXPECT_EQ(ca.final_state_fp32[i], cb.final_state_fp32[i]) << i;
      }
    }
  }
}

// The output and stored_state rounding points are read by both bounds: a contract that
// declares y rounded to bf16 (then stored in the problem's fp32 output) gets y bounds larger
// by at least half a bf16 ULP of |y| than the same contract without that point; one that
// declares the state rounded to bf16 (stored as fp32) gets larger final-state bounds. A
// declared point in the storage format itself changes nothing.
TEST(DeclaredRoundings, OutputAndStoredStatePointsAreRead) {
  const Shape s{{0, 40}, 2, 4, 16, 1};
  const Problem p = realistic_problem(s, Formats{Format::bf16, Format::fp32, Format::fp32}, 13);
  const ref::ExactResult exact = ref::compute(p);
  const auto with_point = [](Contract c, Point point, FormatRef f) {
    std::erase_if(c.roundings, [&](const Rounding& r) { return r.point == point; });
    c.roundings.push_back({point, f});
    return c;
  };
  const auto without_point = [](Contract c, Point point) {
    std::erase_if(c.roundings, [&](const Rounding& r) { return r.point == point; });
    return c;
  };
  const Contract seq = contract_preset("ssu", 0);
  const Contract chk = chunked(chunk_scan::ContractKind::fp32, 64, ChunkLayout::sequence);
  for (const Contract* base : {&seq, &chk}) {
    const Contract plain = without_point(without_point(*base, Point::output), Point::stored_state);
    const Contract y_bf16 = with_point(plain, Point::output, FormatRef::bf16);
    const Contract s_bf16 = with_point(plain, Point::stored_state, FormatRef::bf16);
    const Contract y_same = with_point(plain, Point::output, FormatRef::output);
    std::vector<double> y0, y1, y2, st0, st1;
    if (base == &seq) {
      const auto b = [&](const Contract& c) { return bound::sequential_bounds(sequential_input(p, c, exact)); };
      y0 = b(plain).y, y1 = b(y_bf16).y, y2 = b(y_same).y, st0 = b(plain).stored_state, st1 = b(s_bf16).stored_state;
    } else {
      const auto b = [&](const Contract& c) { return bound::chunked_bounds(chunked_input_for(p, c, exact)); };
      y0 = b(plain).y, y1 = b(y_bf16).y, y2 = b(y_same).y, st0 = b(plain).final_state, st1 = b(s_bf16).final_state;
    }
    for (size_t i = 0; i < y0.size(); ++i) {
      EXPECT_GE(y1[i] - y0[i], 0.5 * half_ulp_at_most_bf16(std::fabs(exact.y.nearest[i]))) << base->name << " y " << i;
      EXPECT_EQ(y2[i], y0[i]) << base->name << " y " << i;
    }
    for (size_t i = 0; i < st0.size(); ++i) EXPECT_GT(st1[i], st0[i]) << base->name << " state " << i;
  }
}

// A hand-off's inherited state error is its own source.
TEST(Attribution, InitialErrorIsASource) {
  const Shape s{{0, 2}, 1, 2, 8, 1};
  const Problem p = realistic_problem(s, Formats{Format::bf16, Format::fp32, Format::bf16}, 3);
  const ref::ExactResult exact = ref::compute(p);
  const Contract c = contract_preset("ssu", 0);
  bound::SequentialInput in = sequential_input(p, c, exact);
  in.initial_error.assign(s.H * s.P * s.N, 1e-3);
  const bound::SequentialBounds full = bound::sequential_bounds(in);
  const bound::Attribution a = bound::attribute_sequential(in, bound::BoundOf::state, 3);
  expect_exact_split(a, full.state[3], "state[3]");
  EXPECT_GT(share_of(a, bound::BoundSource::initial_error), 0.9);
}

// The chunked bound splits exactly too, for every kind of element, with both layouts and
// every rounding point of the production contract (plus final_incoming_state). Without
// initial states a sequence's first chunk has no inter-chunk term, and there the bf16
// decayed C·Bᵀ is the largest source of the y bound (bf16 inputs, fp32 output); later
// chunks read the bf16 incoming state, so a bf16 rounding point leads everywhere.
TEST(Attribution, ChunkedSplitsExactlyOverItsSources) {
  const Shape s{{0, 5, 21}, 2, 4, 16, 1};
  RealisticOptions o;
  o.initial_state = false;
  const Problem p = realistic_problem(s, Formats{Format::bf16, Format::fp32, Format::fp32}, 17, o);
  const ref::ExactResult exact = ref::compute(p);
  for (ChunkLayout layout : {ChunkLayout::sequence, ChunkLayout::global}) {
    Contract c = chunked(chunk_scan::ContractKind::production, 8, layout);
    c.roundings.push_back({Point::final_incoming_state, FormatRef::bf16});
    const bound::ChunkedInput in = chunked_input_for(p, c, exact);
    const bound::ChunkedBounds full = bound::chunked_bounds(in);
    const std::string lay(chunk_layout_name(layout));
    for (int64_t i : {int64_t(0), int64_t(7 * s.H * s.P + 5), int64_t(full.y.size() - 1)}) {
      const bound::Attribution a = bound::attribute_chunked(in, bound::BoundOf::y, i);
      expect_exact_split(a, full.y[i], lay + " y[" + std::to_string(i) + "]");
      const bound::BoundSource top = a.shares.front().source;
      EXPECT_TRUE(top == bound::BoundSource::decayed_CB || top == bound::BoundSource::incoming_state ||
                  top == bound::BoundSource::dt_scaled_B)
          << lay << " " << i << ": " << a.shares.front().label;
    }
    // Token 0 (sequence 0's first chunk): decayed_CB.
    const bound::Attribution first = bound::attribute_chunked(in, bound::BoundOf::y, 1);
    EXPECT_EQ(first.shares.front().label, "decayed_CB (bf16)") << lay;
    const int64_t last_state = int64_t(full.final_state.size()) - 1;
    for (int64_t i : {int64_t(0), last_state}) {
      const bound::Attribution a = bound::attribute_chunked(in, bound::BoundOf::final_state_fp32, i);
      expect_exact_split(a, full.final_state_fp32[i], lay + " final_state_fp32[" + std::to_string(i) + "]");
      // Sequence 0 is one piece from a zero state: nothing enters its last piece.
      if (i == 0) EXPECT_EQ(share_of(a, bound::BoundSource::final_incoming_state), 0) << lay;
      else EXPECT_GT(share_of(a, bound::BoundSource::final_incoming_state), 0) << lay << " " << i;
      expect_exact_split(bound::attribute_chunked(in, bound::BoundOf::final_state, i), full.final_state[i],
                         lay + " final_state");
    }
    const int64_t last_boundary = int64_t(full.boundary_state.size()) - 1;
    expect_exact_split(bound::attribute_chunked(in, bound::BoundOf::boundary_state, last_boundary),
                       full.boundary_state[last_boundary], lay + " boundary_state");
  }
}

// Weights scale their source's terms: the exp budget weighted 0 removes its part, and the
// bound without it is smaller.
TEST(Attribution, WeightsScaleTheirSource) {
  const Shape s{{0, 4}, 1, 2, 8, 1};
  const Problem p = realistic_problem(s, Formats{Format::bf16, Format::fp32, Format::bf16}, 2);
  const ref::ExactResult exact = ref::compute(p);
  const Contract c = contract_preset("ssu", 0);
  bound::SequentialInput in = sequential_input(p, c, exact);
  const double base = share_of(bound::attribute_sequential(in, bound::BoundOf::state, 1), bound::BoundSource::exp);
  ASSERT_GT(base, 0);
  bound::SourceWeights w;
  w[bound::BoundSource::exp] = 0;
  in.weights = &w;
  EXPECT_EQ(share_of(bound::attribute_sequential(in, bound::BoundOf::state, 1), bound::BoundSource::exp), 0);
  const double without = bound::sequential_bounds(in).state[1];
  w[bound::BoundSource::exp] = 1;
  const double with = bound::sequential_bounds(in).state[1];
  EXPECT_LT(without, with);
}

}  // namespace
}  // namespace ssmv::verify

namespace ssmv::verify {
namespace {

// The bounds run their (sequence, head) pairs, heads and rows of C·Bᵀ on worker threads;
// each task writes only its own elements, so every thread count gives the same bits. The
// chunked bound steps each head over up to four pieces in one set of tasks (a head's step
// waits for its step on the piece before): the last sequence's 39 tokens are 5 pieces of 8,
// two batches.
TEST(BoundThreads, ChunkedBoundsAreIdenticalForAnyThreadCount) {
  const Shape s{{0, 5, 21, 60}, 4, 4, 16, 2};  // three sequences, two groups
  const Problem p = realistic_problem(s, Formats{Format::bf16, Format::fp32, Format::bf16}, 41);
  const ref::ExactResult exact = ref::compute(p);
  for (ChunkLayout layout : {ChunkLayout::sequence, ChunkLayout::global}) {
    const Contract c = chunked(chunk_scan::ContractKind::production, 8, layout);
    bound::ChunkedInput in = chunked_input_for(p, c, exact);
    in.threads = 1;
    in.work_per_thread = 1;  // threads even for these small pieces
    const bound::ChunkedBounds one = bound::chunked_bounds(in);
    for (int threads : {2, 3, 16}) {
      in.threads = threads;
      const bound::ChunkedBounds many = bound::chunked_bounds(in);
      expect_identical(one.y, many.y, "y");
      expect_identical(one.final_state, many.final_state, "final_state");
      expect_identical(one.final_state_fp32, many.final_state_fp32, "final_state_fp32");
      expect_identical(one.boundary_state, many.boundary_state, "boundary_state");
      EXPECT_EQ(one.boundary_positions, many.boundary_positions);
    }
  }
}

TEST(BoundThreads, SequentialBoundsAreIdenticalForAnyThreadCount) {
  const Shape s{{0, 3, 4, 9}, 4, 4, 16, 2};
  const Problem p = realistic_problem(s, Formats{Format::bf16, Format::bf16, Format::bf16}, 43);
  const ref::ExactResult exact = ref::compute(p);
  const Contract c = contract_preset("ssu", 0);
  for (bool every_token : {false, true}) {
    bound::SequentialInput in = sequential_input_for(p, c, exact, every_token);
    in.threads = 1;
    const bound::SequentialBounds one = bound::sequential_bounds(in);
    for (int threads : {2, 5, 16}) {
      in.threads = threads;
      const bound::SequentialBounds many = bound::sequential_bounds(in);
      expect_identical(one.y, many.y, "y");
      expect_identical(one.state, many.state, "state");
      expect_identical(one.stored_state, many.stored_state, "stored_state");
    }
  }
}

// SequentialPairBound stepped over every pair, in any pair order, with each token's y as a
// streamed check is handed it, gives sequential_bounds' y, state and stored_state bit for
// bit: three sequences (one of one token), z, D, dt_bias, softplus, initial states and error, both
// store modes and a bf16 state.
TEST(SequentialPairBound, SteppedPairsGiveTheBatchBoundsBitForBit) {
  const Shape s{{0, 4, 5, 11}, 3, 4, 16, 1};
  const Problem p = realistic_problem(s, Formats{Format::bf16, Format::bf16, Format::fp32}, 61);
  ASSERT_TRUE(p.has_z() && p.has_D() && p.has_dt_bias() && p.dt_softplus && p.has_initial_state());
  const ref::ExactResult exact = ref::compute(p);
  const Contract c = contract_preset("ssu", 0);
  for (bool every_token : {false, true}) {
    bound::SequentialInput in = sequential_input_for(p, c, exact, every_token);
    in.initial_error.assign(size_t(3 * s.H * s.P * s.N), 1e-6);
    const bound::SequentialBounds batch = bound::sequential_bounds(in);
    bound::SequentialBounds stepped;
    stepped.y.assign(batch.y.size(), -1.0);
    stepped.state.assign(batch.state.size(), -1.0);
    stepped.stored_state.assign(batch.stored_state.size(), -1.0);
    bound::SequentialPairBound pair(in);
    const size_t P = size_t(s.P), PN = size_t(s.P * s.N);
    for (int64_t task = 3 * s.H - 1; task >= 0; --task) {  // pairs in reverse order, one stepper
      const int64_t seq = task / s.H, h = task % s.H;
      pair.start(seq, h);
      for (int64_t t = s.cu_seqlens[seq]; t < s.cu_seqlens[seq + 1]; ++t) {
        const size_t i = size_t(p.x_index(t, h, 0));
        pair.step(t, std::span(exact.y.nearest).subspan(i, P), std::span(exact.y.certified_error).subspan(i, P),
                  std::span(exact.y_ungated).subspan(i, P), std::span(stepped.y).subspan(i, P));
      }
      const size_t si = size_t(p.state_index(seq, h, 0, 0));
      pair.finish(std::span(stepped.state).subspan(si, PN), std::span(stepped.stored_state).subspan(si, PN));
    }
    expect_identical(batch.y, stepped.y, "y");
    expect_identical(batch.state, stepped.state, "state");
    expect_identical(batch.stored_state, stepped.stored_state, "stored_state");
  }
}

// A pair's tokens must come in order and all of them before finish().
TEST(SequentialPairBound, TokensOutOfOrderAreRefused) {
  const Shape s{{0, 3}, 1, 2, 8, 1};
  const Problem p = realistic_problem(s, Formats{Format::bf16, Format::fp32, Format::fp32}, 7);
  const ref::ExactResult exact = ref::compute(p);
  const Contract c = contract_preset("ssu", 0);
  const bound::SequentialInput in = sequential_input_for(p, c, exact, 1);
  bound::SequentialPairBound pair(in);
  std::vector<double> y(2), state(16), stored(16);
  const auto y_of = [&](int64_t t) { return std::span(exact.y.nearest).subspan(size_t(p.x_index(t, 0, 0)), 2); };
  pair.start(0, 0);
  EXPECT_THROW(pair.step(1, y_of(1), y_of(1), y_of(1), y), std::logic_error);
  pair.step(0, y_of(0), y_of(0), y_of(0), y);
  EXPECT_THROW(pair.finish(state, stored), std::logic_error);
  EXPECT_THROW(pair.step(0, y_of(0), y_of(0), y_of(0), y), std::logic_error);
}

// The parts of a y element from its own y (what a streamed check keeps of its worst
// element) equal the parts read from the whole y vectors, source by source.
TEST(Attribution, OneElementsOwnYGivesTheSameParts) {
  const Shape s{{0, 5, 12}, 2, 4, 16, 1};
  const Problem p = realistic_problem(s, Formats{Format::bf16, Format::fp32, Format::fp32}, 23);
  const ref::ExactResult exact = ref::compute(p);
  const Contract c = contract_preset("ssu", 0);
  const bound::SequentialInput in = sequential_input_for(p, c, exact, 1);
  bound::SequentialInput without_y = in;
  without_y.y_exact = without_y.y_certified_error = without_y.y_ungated = nullptr;
  for (int64_t i = 0; i < int64_t(exact.y.size()); i += 3) {
    const bound::YElement own{exact.y.nearest[i], exact.y.certified_error[i], exact.y_ungated[i]};
    const bound::Tagged a = bound::sequential_bound_parts(in, bound::BoundOf::y, i);
    const bound::Tagged b = bound::sequential_bound_parts(without_y, bound::BoundOf::y, i, &own);
    EXPECT_EQ(a.v, b.v) << "y[" << i << "]";
    EXPECT_GT(bound::total(a), 0) << i;
  }
  // The state's parts read no y.
  const bound::Tagged st = bound::sequential_bound_parts(without_y, bound::BoundOf::stored_state, 77);
  EXPECT_EQ(st.v, bound::sequential_bound_parts(in, bound::BoundOf::stored_state, 77).v);
  EXPECT_THROW(bound::sequential_bound_parts(without_y, bound::BoundOf::y, 0), std::invalid_argument);
}

// A task that throws: the error of the first failing pair in order, for any thread count.
TEST(BoundThreads, TheFirstFailingPairsErrorIsReportedForAnyThreadCount) {
  const Shape s{{0, 2, 4}, 4, 2, 8, 1};
  RealisticOptions o;
  o.dt_softplus = false;
  Problem p = realistic_problem(s, Formats{Format::fp32, Format::fp32, Format::fp32}, 5, o);
  // δ·A > 0, outside the exp budget, at (token 3, head 1) and (token 0, head 2).
  p.dt.loosen();
  p.dt.set(p.dt_index(3, 1), -4.0f);
  p.dt.set(p.dt_index(0, 2), -2.0f);
  const ref::ExactResult exact = ref::compute(p);
  const Contract c = load_contract("triton.ssu", 0);  // exp budget for arguments ≤ 0
  std::string first;
  for (int threads : {1, 4}) {
    bound::SequentialInput in = sequential_input_for(p, c, exact, 0);
    in.threads = threads;
    try {
      bound::sequential_bounds(in);
      FAIL() << "no error with " << threads << " threads";
    } catch (const std::invalid_argument& e) {
      if (first.empty()) first = e.what();
      EXPECT_EQ(first, e.what()) << threads << " threads";
    }
  }
}

// docs/bounds.md [2.4]: the contract lets a kernel associate δ·B·x in any order. With
// δ = 20 and B·x subnormal in fp32, δ·fl(B·x) loses up to δ·η to the first product's
// underflow (here 8·2^-149 = 16η), far more than |x|·η, the loss of (δ·B)·x: the bound
// covers both associations (issue 16: δ·(B·x) was judged VIOLATION).
// One token, H = P = N = G = 1, fp32 throughout, zero initial state, no softplus, bias, D or z:
// δ = dt exactly and the state is δ·B·x.
Problem one_element_problem(float dt, float B, float x) {
  const Shape s{{0, 1}, 1, 1, 1, 1};
  RealisticOptions o;
  o.dt_softplus = false;
  o.dt_bias = false;
  o.z = false;
  o.initial_state = false;
  o.d_mode = DMode::none;
  Problem p = realistic_problem(s, Formats{Format::fp32, Format::fp32, Format::fp32}, 1, o);
  for (FormatValues* v : {&p.dt, &p.B, &p.x, &p.C}) v->loosen();  // edited
  p.dt.set(0, dt);
  p.A[0] = -1.0f;
  p.B.set(0, B);
  p.x.set(0, x);
  p.C.set(0, 1.0f);
  return p;
}

TEST(AssociationGap, AReassociatedProductWithSubnormalIntermediatesIsWithinTheBound) {
  const Problem p = one_element_problem(20.0f, std::ldexp(33.0f, -145), 0.3f);  // B = 528·2^-149: subnormal
  const ref::ExactResult exact = ref::compute(p);
  const Contract c = contract_preset("ssu", 0);
  const bound::SequentialBounds b = bound::sequential_bounds(sequential_input_for(p, c, exact, 0));
  // The kernel: zero initial state, so S = fl(δ·fl(B·x)) in fp32 (no FMA: two roundings).
  volatile float bx = p.B[0] * p.x[0];
  volatile float reassociated = p.dt[0] * bx;
  volatile float usual_db = p.dt[0] * p.B[0];
  volatile float usual = usual_db * p.x[0];
  const double exact_state = double(p.dt[0]) * double(p.B[0]) * double(p.x[0]);  // exact in double
  ASSERT_EQ(exact_state, exact.final_state.nearest[0]);
  const double err_reassociated = std::fabs(double(reassociated) - exact_state);
  EXPECT_GT(err_reassociated, 8 * std::ldexp(1.0, -150)) << "the case must exercise the underflow of B·x";
  EXPECT_LE(err_reassociated, b.state[0]);
  EXPECT_LE(std::fabs(double(usual) - exact_state), b.state[0]);
}

// Under flush_to_zero a subnormal operand may be read as zero: B = 2^-130 flushed in δ·B·x
// with δ = 20, x = 100 loses 2000·2^-130 = 125·2^-126, more than the underflow terms without
// flushed operands allow ((max(|x|, δ, |B|) + 3)·2^-126 = 103·2^-126), within the bound with
// them (docs/bounds.md [2.4]).
TEST(FlushToZero, AFlushedOperandIsWithinTheBound) {
  const Problem p = one_element_problem(20.0f, std::ldexp(1.0f, -130), 100.0f);
  const ref::ExactResult exact = ref::compute(p);
  Contract c = contract_preset("ssu", 0);
  c.flush_to_zero = true;
  const bound::SequentialBounds b = bound::sequential_bounds(sequential_input_for(p, c, exact, 0));
  const double err = std::fabs(exact.final_state.nearest[0]);  // the kernel's state: 0
  EXPECT_EQ(err, 2000 * std::ldexp(1.0, -130));
  EXPECT_GT(err, 103 * std::ldexp(1.0, -126) * bound::kSafetyFactor);
  EXPECT_LE(err, b.state[0]);
  EXPECT_EQ(bound::flushed_operand_floor(c), std::ldexp(1.0, -126));
  c.flush_to_zero = false;
  EXPECT_EQ(bound::flushed_operand_floor(c), 0.0);
}

}  // namespace
}  // namespace ssmv::verify

namespace ssmv::verify {
namespace {

// A check that judges no chunk-end states turns boundary_states off: the pieces·H·P·N
// doubles are not kept, and every other bound is the same bit for bit (the boundary bound is
// an output of the piece loop, read by nothing else); its attribution still works.
TEST(BoundMemory, BoundaryStatesOffKeepsEveryOtherBound) {
  const Shape s{{0, 5, 21, 40}, 4, 4, 16, 2};
  const Problem p = realistic_problem(s, Formats{Format::bf16, Format::fp32, Format::bf16}, 43);
  const ref::ExactResult exact = ref::compute(p);
  const Contract c = chunked(chunk_scan::ContractKind::production, 8, ChunkLayout::sequence);
  bound::ChunkedInput in = chunked_input_for(p, c, exact);
  const bound::ChunkedBounds kept = bound::chunked_bounds(in);
  in.boundary_states = false;
  const bound::ChunkedBounds off = bound::chunked_bounds(in);
  EXPECT_TRUE(off.boundary_state.empty());
  ASSERT_FALSE(kept.boundary_state.empty());
  expect_identical(kept.y, off.y, "y");
  expect_identical(kept.final_state, off.final_state, "final_state");
  expect_identical(kept.final_state_fp32, off.final_state_fp32, "final_state_fp32");
  EXPECT_EQ(kept.boundary_positions, off.boundary_positions);
  const int64_t last = int64_t(kept.boundary_state.size()) - 1;
  expect_exact_split(bound::attribute_chunked(in, bound::BoundOf::boundary_state, last), kept.boundary_state[last],
                     "boundary_state with boundary_states off");
}

// y's error before D·x is kept as a float rounded up: never below the double, at most 2^-23
// of it above in float's normal range (at most one float ULP, 2^-23 of the binade's start, and the
// value lies above that start), a float kept as it is, and below float's range the smallest
// subnormal 2^-149.
TEST(BoundMemory, BeforeDxKeptRoundsUpToAFloat) {
  EXPECT_EQ(bound::before_dx_kept(0.0), 0.0f);
  EXPECT_EQ(bound::before_dx_kept(0.375), 0.375f);
  EXPECT_EQ(bound::before_dx_kept(1e-60), 0x1p-149f);
  uint64_t state = 12345;
  for (int i = 0; i < 100000; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const double e = std::ldexp(double(state >> 11) * 0x1p-53 + 0.5, int(state % 200) - 120);  // 2^-121 .. 2^80
    const double kept = bound::before_dx_kept(e);
    ASSERT_GE(kept, e) << e;
    ASSERT_LE(kept - e, 0x1p-23 * e) << e;
  }
}

// The streamed check's per-element floats: every (token, head) row has floats of its own for
// every shape (blocks of whole pages, a last block shorter than the others), and a block's floats read
// as zeros once each of its rows is released — not before, and no other block's.
TEST(BoundMemory, YBeforeDxRowsDrainBlockByBlock) {
  for (const auto& [T, H, P] : {std::array<int64_t, 3>{5, 3, 7}, {9000, 2, 64}, {70000, 1, 5}, {1, 1, 1}}) {
    bound::YBeforeDx y;
    y.assign(T, H, P);
    ASSERT_FALSE(y.empty());
    for (int64_t t = 0; t < T; ++t) {
      for (int64_t h = 0; h < H; ++h) {
        float* row = y.row(t, h);
        for (int64_t p = 0; p < P; ++p) row[p] = float((t * H + h) * P + p + 1);
      }
    }
    // Read back after every row is written, heads last to first: no two rows share a float.
    for (int64_t h = H - 1; h >= 0; --h) {
      for (int64_t t = 0; t < T; ++t) {
        for (int64_t p = 0; p < P; ++p) {
          ASSERT_EQ(y.row(t, h)[p], float((t * H + h) * P + p + 1)) << T << " " << t;
        }
      }
    }
    // Head 0's rows released, all but its last token: head 0's last block keeps every value;
    // then its last token: head 0 reads zeros everywhere, the other heads keep theirs.
    for (int64_t t = 0; t + 1 < T; ++t) y.release(t, 0);
    EXPECT_EQ(y.row(T - 1, 0)[P - 1], float(((T - 1) * H) * P + P)) << T;
    y.release(T - 1, 0);
    for (int64_t t = 0; t < T; ++t) {
      ASSERT_EQ(y.row(t, 0)[0], 0.0f) << T << " " << t;
    }
    if (H > 1) {
      EXPECT_EQ(y.row(T - 1, 1)[0], float(((T - 1) * H + 1) * P + 1));
    }
    EXPECT_THROW(y.release(0, 0), std::logic_error);  // a row released twice
    y.clear();
    EXPECT_TRUE(y.empty());
  }
}

}  // namespace
}  // namespace ssmv::verify
