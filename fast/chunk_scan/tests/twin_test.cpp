// The host twin on the CPU: against the certified reference within verify's bound of its
// contract (verify/run/kernel_check.h: every element of y, the final states and the states at
// every chunk boundary judged), chunk sizes 64/128/256 on one problem, the returned states'
// consistency, and bad input rejected with the field and value named.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>

#include "fast/chunk_scan/tests/problem_gen.h"
#include "fast/chunk_scan/twin.h"
#include "reference/reference.h"
#include "verify/reports/gtest_contract.h"
#include "verify/run/kernel_check.h"

namespace ssmv::chunk_scan {
namespace {

using testing::GenOptions;

struct Case {
  ContractKind contract;
  Format input;
  int64_t L;
};

std::string name_of(const ::testing::TestParamInfo<Case>& info) {
  return std::string(contract_kind_name(info.param.contract)) + "_" +
         std::string(format_name(info.param.input)) + "_L" + std::to_string(info.param.L);
}

class TwinVsReference : public ::testing::TestWithParam<Case> {};

TEST_P(TwinVsReference, WithinContract) {
  const Case k = GetParam();
  GenOptions o;
  o.input = k.input;
  o.output = Format::fp32;  // fp32 outputs: the bound's non-rounding part is what is tested
  o.state = Format::fp32;
  o.H = 2, o.G = 1, o.P = 16, o.N = 32;
  o.seq_lens = {1, k.L - 1, k.L, k.L + 1, 2 * k.L + 3};
  o.z = true;
  o.initial_state = true;
  const Problem p = testing::make_problem(o, 0xC0FFEE + uint64_t(k.L));
  const std::string ctx = testing::describe(p);
  const verify::KernelCheck kc =
      verify::check_chunk_scan(p, k.contract, k.L, Device::twin, /*boundary_states=*/true);
  EXPECT_WITHIN_CONTRACT(kc) << ctx;
  ASSERT_EQ(kc.tensors.size(), 3u);  // y, final_state, boundary_states
  // Non-vacuous: the twin is not exact (it rounds), and the bound is not absurdly loose
  // (the worst element uses more than 1/1000 of it).
  EXPECT_GT(kc.tensors[0].max_bound_usage, 1e-3) << "y error/bound suspiciously small: " << ctx;
  std::printf("  worst error/bound: y %.3g, final state %.3g, boundary states %.3g\n",
              kc.tensors[0].max_bound_usage, kc.tensors[1].max_bound_usage, kc.tensors[2].max_bound_usage);
}

INSTANTIATE_TEST_SUITE_P(
    Contracts, TwinVsReference,
    ::testing::Values(Case{ContractKind::production, Format::bf16, 64},
                      Case{ContractKind::production, Format::bf16, 256},
                      Case{ContractKind::production, Format::fp16, 128},
                      Case{ContractKind::production, Format::fp32, 64},
                      Case{ContractKind::fp32, Format::bf16, 64},
                      Case{ContractKind::fp32, Format::fp16, 256},
                      Case{ContractKind::fp32, Format::bf16, 128}),
    name_of);

TEST(TwinChunkSizes, SixtyFourVsOneTwentyEightVsTwoFiftySix) {
  GenOptions o;
  o.H = 2, o.G = 2, o.P = 8, o.N = 16;
  o.seq_lens = {40, 300, 64, 129, 1};
  o.output = Format::fp32;
  o.initial_state = true;
  const Problem p = testing::make_problem(o, 7);
  const ref::ExactResult exact = ref::compute(p);
  for (ContractKind kind : {ContractKind::production, ContractKind::fp32}) {
    std::vector<Result> results;
    for (int64_t L : {64, 128, 256}) {
      results.push_back(run(p, Device::twin, Config{kind, L, false, false}));
      EXPECT_WITHIN_CONTRACT(verify::judge_chunk_scan(p, kind, L, exact, results.back(), "twin"))
          << "L=" << L;
    }
    // Sequences of ≤ 64 tokens are one chunk at every size: identical bits there.
    const int64_t H = p.shape.H, P = p.shape.P, N = p.shape.N;
    for (int64_t s : {0, 2, 4}) {
      for (int64_t t = p.shape.cu_seqlens[s]; t < p.shape.cu_seqlens[s + 1]; ++t) {
        for (int64_t i = t * H * P; i < (t + 1) * H * P; ++i) {
          ASSERT_EQ(std::memcmp(&results[0].y[i], &results[1].y[i], 4), 0) << i;
          ASSERT_EQ(std::memcmp(&results[0].y[i], &results[2].y[i], 4), 0) << i;
        }
      }
      for (int64_t i = s * H * P * N; i < (s + 1) * H * P * N; ++i) {
        ASSERT_EQ(std::memcmp(&results[0].final_state[i], &results[2].final_state[i], 4), 0);
      }
    }
    // Longer sequences take different rounding paths: some y must differ (else the chunk
    // size would not be exercised at all).
    bool any_differs = false;
    for (int64_t i = p.shape.cu_seqlens[1] * H * P; i < p.shape.cu_seqlens[2] * H * P; ++i) {
      any_differs = any_differs || results[0].y[i] != results[2].y[i];
    }
    EXPECT_TRUE(any_differs);
  }
}

TEST(TwinStates, LastBoundaryStateIsTheFinalState) {
  GenOptions o;
  o.state = Format::bf16;
  o.seq_lens = {65, 3, 128};
  o.initial_state = true;
  const Problem p = testing::make_problem(o, 11);
  const Result r = run(p, Device::twin, Config{ContractKind::production, 64, true, false});
  const ChunkPlan plan = plan_chunks(p.shape.cu_seqlens, 64);
  ASSERT_EQ(r.boundary_positions.size(), size_t(plan.num_chunks()));
  const int64_t E = p.shape.H * p.shape.P * p.shape.N;
  for (int64_t s = 0; s < p.shape.num_sequences(); ++s) {
    const int64_t c = plan.first_chunk[s + 1] - 1;
    EXPECT_EQ(r.boundary_positions[c], p.shape.cu_seqlens[s + 1]);
    EXPECT_EQ(std::memcmp(&r.boundary_states[c * E], &r.final_state[s * E], 4 * E), 0) << s;
  }
}

void expect_rejected(const Problem& p, const Config& cfg, const std::string& needle) {
  try {
    run(p, Device::twin, cfg);
    ADD_FAILURE() << "accepted; expected an error naming " << needle;
  } catch (const ProblemError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(TwinBadInput, RejectedWithFieldAndValue) {
  GenOptions o;
  o.seq_lens = {5, 7};
  const Problem good = testing::make_problem(o, 3);
  expect_rejected(good, Config{ContractKind::production, 100, false, false}, "'chunk_size' = 100");
  expect_rejected(good, Config{ContractKind::production, 32, false, false}, "'chunk_size' = 32");
  Problem p = good;
  p.shape.cu_seqlens = {0, 7, 5};
  expect_rejected(p, Config{}, "cu_seqlens");
  p = good;
  p.x.loosen();
  p.x.resize(p.x.size() - 1);
  expect_rejected(p, Config{}, "'x'");
  o.P = 257;
  expect_rejected(testing::make_problem(o, 3), Config{}, "'P' = 257");
  o.P = 16;
  o.N = 512;
  expect_rejected(testing::make_problem(o, 3), Config{}, "'N' = 512");
}

}  // namespace
}  // namespace ssmv::chunk_scan
