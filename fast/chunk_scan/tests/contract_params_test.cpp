// The contracts as data (what the verifier reads) and the launch-parameter validation
// (fails before any launch, naming the field and the value).
#include <gtest/gtest.h>

#include <string>

#include "fast/chunk_scan/contract.h"
#include "fast/chunk_scan/check.h"
#include "spec/problem.h"

namespace ssmv::chunk_scan {
namespace {

bool rounds(const Contract& c, Point p, FormatRef f) {
  for (const Rounding& r : c.roundings) {
    if (r.point == p && r.format == f) return true;
  }
  return false;
}

TEST(ChunkScanContract, ProductionRoundsThreeIntermediatesToTheInputFormat) {
  const Contract c = contract(ContractKind::production, 128);
  EXPECT_EQ(c.name, "chunk_scan.production");
  EXPECT_EQ(c.family, Family::chunked);
  EXPECT_EQ(c.chunk_size, 128);
  EXPECT_TRUE(rounds(c, Point::dt_scaled_B, FormatRef::input));
  EXPECT_TRUE(rounds(c, Point::incoming_state, FormatRef::input));
  EXPECT_TRUE(rounds(c, Point::decayed_CB, FormatRef::input));
  EXPECT_TRUE(rounds(c, Point::stored_state, FormatRef::state));
  EXPECT_TRUE(rounds(c, Point::output, FormatRef::output));
  EXPECT_EQ(c.roundings.size(), 5u);
  bool mma = false;
  for (const Reduction& r : c.reductions) mma = mma || r.order == ReductionOrder::mma_m16n8k16;
  EXPECT_TRUE(mma);
  EXPECT_TRUE(c.softplus_shortcut);
  EXPECT_FALSE(c.flush_to_zero);
}

TEST(ChunkScanContract, Fp32RoundsOnlyStoredValues) {
  const Contract c = contract(ContractKind::fp32, 64);
  EXPECT_EQ(c.name, "chunk_scan.fp32");
  EXPECT_EQ(c.roundings.size(), 2u);
  EXPECT_TRUE(rounds(c, Point::stored_state, FormatRef::state));
  EXPECT_TRUE(rounds(c, Point::output, FormatRef::output));
  for (const Reduction& r : c.reductions) EXPECT_NE(r.order, ReductionOrder::mma_m16n8k16) << r.what;
  // Budgets of every transcendental the kernels evaluate (fast/common/fast_math.h).
  for (const char* f : {"exp", "softplus", "sigmoid"}) {
    bool found = false;
    for (const TranscendentalBudget& b : c.transcendentals) found = found || b.function == f;
    EXPECT_TRUE(found) << f;
  }
}

TEST(ChunkScanContract, KindsParseByName) {
  ContractKind k;
  ASSERT_TRUE(parse_contract_kind("production", k));
  EXPECT_EQ(k, ContractKind::production);
  ASSERT_TRUE(parse_contract_kind("fp32", k));
  EXPECT_EQ(k, ContractKind::fp32);
  EXPECT_FALSE(parse_contract_kind("bf16", k));
}

// Valid parameters of a 2-sequence problem (pointers are never dereferenced here).
Params valid_params() {
  static char dummy[16];
  Params p;
  p.T = 300, p.S = 2, p.H = 4, p.P = 64, p.N = 128, p.G = 2, p.L = 128, p.NC = 4;
  p.input = Format::bf16;
  p.use_mma = true;
  p.x_st = p.H * p.P, p.x_sh = p.P;
  p.y_st = p.x_st, p.y_sh = p.x_sh;
  p.b_st = p.G * p.N, p.b_sg = p.N;
  p.c_st = p.b_st, p.c_sg = p.N;
  p.dt_st = p.H;
  p.x = p.dt = p.B = p.C = dummy;
  p.A = reinterpret_cast<const float*>(dummy);
  p.chunk_start = p.chunk_len = p.seq_first_chunk = reinterpret_cast<const int32_t*>(dummy);
  p.delta = p.cumsum = p.chunk_decay = p.chunk_state = p.cb = reinterpret_cast<float*>(dummy);
  p.state_in = p.y = p.final_state = dummy;
  return p;
}

void expect_rejected(const Params& p, const std::string& needle) {
  try {
    check_params(p);
    ADD_FAILURE() << "accepted; expected an error naming " << needle;
  } catch (const ProblemError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(ChunkScanParamsValidation, RejectsBeforeLaunchWithFieldAndValue) {
  EXPECT_NO_THROW(check_params(valid_params()));
  Params p = valid_params();
  p.L = 96;
  expect_rejected(p, "'L' = 96");
  p = valid_params();
  p.P = 300;
  expect_rejected(p, "'P' = 300");
  p = valid_params();
  p.N = 257;
  expect_rejected(p, "'N' = 257");
  p = valid_params();
  p.G = 3;
  expect_rejected(p, "'G' = 3");
  p = valid_params();
  p.x_sh = 32;  // rows of 64 elements 32 apart overlap
  expect_rejected(p, "'x_st'");
  p = valid_params();
  p.input = Format::fp32;  // tensor cores need 16-bit operands
  expect_rejected(p, "'use_mma'");
  p = valid_params();
  p.z = p.x;  // z given without its strides
  expect_rejected(p, "z_s");
  p = valid_params();
  p.d_mode = DMode::per_head;  // D's layout without D
  expect_rejected(p, "'d_mode' = 1: D is null");
  p = valid_params();
  p.D = p.A;  // D without its layout
  expect_rejected(p, "D is set but d_mode is none");
}

}  // namespace
}  // namespace ssmv::chunk_scan
