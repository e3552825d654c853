// The bounds of verify/bound/ on small closed-form cases: the chunk layouts, the
// final_incoming_state rounding point (docs/bounds.md §3).
#include <gtest/gtest.h>

#include <cmath>

#include "fast/chunk_scan/contract.h"
#include "reference/reference.h"
#include "spec/realistic_problem.h"
#include "verify/bound/chunked_bound.h"
#include "verify/bound/error_model.h"
#include "verify/kernel_check.h"

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
  for (int64_t t = 0; t < 5; ++t) p.dt[p.dt_index(t, 0)] = 2.0f;
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
