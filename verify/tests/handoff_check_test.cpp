// `ssmv check --kernel handoff` on external dumps: a chunked prefill of each sequence's
// first prefill[s] tokens, its final state stored in the state format and decoded token by
// token from there. The "external" pair is the bundled twins driven as a serving engine
// drives foreign kernels: chunk_scan over the prefixes (varlen), SSU launched once per
// token. Judged by the combined bound, the honest pair is within contract; judged as one
// kernel, or with the wrong prefix, it is not — the failure this check exists to remove.
#include <gtest/gtest.h>

#include "spec/realistic_problem.h"
#include "verify/contracts/contract_json.h"
#include "verify/judge/external_check.h"
#include "verify/tests/handoff_run.h"

namespace ssmv::verify {
namespace {

using testing::HandoffRun;
using testing::run_handoff;

// Two sequences of 100 and 80 tokens; fp32 outputs so that the bounds, not the final bf16
// rounding, decide (docs/bounds.md: judge tightness on fp32 outputs).
Problem problem(Format state) {
  return realistic_problem(Shape{{0, 100, 180}, 2, 4, 16, 1}, Formats{Format::bf16, state, Format::fp32}, 91);
}

ExternalKernel handoff(const std::vector<int64_t>& prefill, int64_t L) {
  ExternalKernel k;
  k.family = "handoff";
  k.contract = contract_preset("chunk_scan.production", L);
  k.decode_contract = contract_preset("ssu", 0);
  k.prefill_tokens = prefill;
  return k;
}

class HandoffCheck : public ::testing::TestWithParam<Format> {};

TEST_P(HandoffCheck, HonestPairIsWithinTheCombinedBound) {
  const Problem p = problem(GetParam());
  const std::vector<int64_t> prefill{70, 45};  // not multiples of the chunk size 64
  const HandoffRun run = run_handoff(p, prefill, 64);
  const KernelCheck kc = check_external(p, handoff(prefill, 64), run.y, run.final_states);
  ASSERT_EQ(kc.tensors.size(), 2u);
  EXPECT_TRUE(kc.ok()) << "y usage " << kc.tensors[0].max_bound_usage << " at " << kc.tensors[0].worst.index
                       << ", state usage " << kc.tensors[1].max_bound_usage;
  EXPECT_EQ(kc.contract, "chunk_scan.production+ssu");
  // Not vacuous: the fp32 outputs are mostly not correctly rounded.
  EXPECT_GT(kc.tensors[0].count(Verdict::within_contract), kc.tensors[0].elements / 2);
}

INSTANTIATE_TEST_SUITE_P(StateFormats, HandoffCheck, ::testing::Values(Format::fp32, Format::bf16),
                         [](const auto& info) { return std::string(format_name(info.param)); });

// The two tests below need an fp32 state: a decode that stores a bf16 state after every
// token loses u_bf16 = 2^-8 of the state per token, so its bound is as wide as the chunked
// prefix's bf16 intermediates and cannot tell the two apart.
TEST(HandoffCheckFp32State, TheSameDumpJudgedAsOneKernelIsAViolation) {
  // What `--kernel ssu` said of a correct pair before the hand-off check existed: the
  // chunked prefix (bf16 intermediates) is far outside the fp32 decode contract.
  const Problem p = problem(Format::fp32);
  const std::vector<int64_t> prefill{70, 45};
  const HandoffRun run = run_handoff(p, prefill, 64);
  ExternalKernel as_ssu;
  as_ssu.family = "ssu";
  as_ssu.contract = contract_preset("ssu", 0);
  const KernelCheck kc = check_external(p, as_ssu, run.y, run.final_states);
  EXPECT_GT(kc.tensors[0].count(Verdict::violation), 0);
}

TEST(HandoffCheckFp32State, AWrongPrefixIsAViolationInY) {
  // Declared prefix 5 and 3 where the engine prefilled 70 and 45: tokens 5..69 and 3..44
  // came from the chunked kernel but are judged by the decode bound.
  const Problem p = problem(Format::fp32);
  const HandoffRun run = run_handoff(p, {70, 45}, 64);
  const KernelCheck kc = check_external(p, handoff({5, 3}, 64), run.y, run.final_states);
  EXPECT_GT(kc.tensors[0].count(Verdict::violation), 0);
  const std::vector<int64_t>& at = kc.tensors[0].worst.coords;  // sequence, token, head, dim
  ASSERT_EQ(at.size(), 4u);
  EXPECT_LT(at[1], at[0] == 0 ? 70 : 45) << "the worst element lies in the undeclared prefix";
}

TEST(HandoffCheckInput, PrefixLongerThanASequenceNamesTheSequence) {
  const Problem p = problem(Format::fp32);
  const HandoffRun run = run_handoff(p, {70, 45}, 64);
  try {
    check_external(p, handoff({70, 81}, 64), run.y, run.final_states);
    FAIL() << "no error";
  } catch (const ProblemError& e) {
    EXPECT_NE(std::string(e.what()).find("prefill_tokens[1] = 81 is outside [0, 80]"), std::string::npos) << e.what();
  }
}

TEST(HandoffCheckInput, PrefillTokensOnADecodeOnlyKernelAreRefused) {
  const Problem p = problem(Format::fp32);
  ExternalKernel k;
  k.family = "ssu";
  k.contract = contract_preset("ssu", 0);
  k.prefill_tokens = {1, 1};
  try {
    validate_external(p, k);
    FAIL() << "no error";
  } catch (const ProblemError& e) {
    EXPECT_NE(std::string(e.what()).find("only a hand-off"), std::string::npos) << e.what();
  }
}

TEST(HandoffCheckInput, ContractsOfTheWrongFamilyAreRefused) {
  const Problem p = problem(Format::fp32);
  ExternalKernel k = handoff({70, 45}, 64);
  std::swap(k.contract, k.decode_contract);
  EXPECT_THROW(validate_external(p, k), ProblemError);
}

}  // namespace
}  // namespace ssmv::verify
