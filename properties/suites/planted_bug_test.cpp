// The planted-bug catalogue against property 1 (planted/planted_ssu.h), and the
// counterexample round trip:
//   1. the SSU-within-contract property, run on a broken SSU variant, fails;
//   2. the failure left a counterexample file (SSMV_CEX_DIR, here a fresh test folder)
//      holding the shrunk case, the planted bug and rapidcheck's reproduce string;
//   3. the file reads back (verify/reports/counterexample.h) and re-judges on the CPU to the same
//      verdict and the same worst element;
//   4. the correct twin passes on that same case, so the bug, not the data, fails it;
//   5. the shrunk case is small (its size is printed: tokens, H, P, N);
// and the shrink budget (harness/shrink_budget.h): with SSMV_SHRINK_STEPS below the steps an
// unlimited shrink takes, shrinking stops after exactly that many steps, the reported case
// still fails, the message and the file say that the budget ended shrinking, and the
// reproduce string walks to that same case.
// Case counts: each planted-bug property stops at its first failure (base 60, the count of
// property 1), then shrinks.
#include <gtest/gtest.h>
#include <rapidcheck/detail/TestListenerAdapter.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include "properties/gen/problem_gen.h"
#include "properties/harness/case_failure.h"
#include "properties/harness/property.h"
#include "properties/harness/settings.h"
#include "properties/planted/planted_ssu.h"
#include "verify/reports/report_text.h"

namespace ssmv::prop {
namespace {

void drop_d_property() { planted_ssu_within_contract(PlantedBug::drop_d); }
void wrong_group_property() { planted_ssu_within_contract(PlantedBug::wrong_group); }

// Runs a planted-bug property with counterexamples going to a fresh folder and no result
// file (its failure is expected; a campaign's merged results would count it as a failure),
// under a shrink budget of `shrink_steps` steps (0: no limit) and no time budget.
PropertyOutcome run_planted(const std::string& name, void (*fn)(), int64_t shrink_steps = kDefaultShrinkSteps) {
  // One folder per property: CTest runs these tests in parallel processes.
  const std::filesystem::path dir = std::filesystem::path(testing::TempDir()) / ("ssmv_planted_cex." + name);
  std::filesystem::remove_all(dir);
  const char* results = std::getenv("SSMV_PROP_RESULTS");
  const std::string saved = results ? results : "";
  setenv("SSMV_CEX_DIR", dir.c_str(), 1);
  setenv("SSMV_SHRINK_STEPS", std::to_string(shrink_steps).c_str(), 1);
  setenv("SSMV_SHRINK_SECONDS", "0", 1);
  unsetenv("SSMV_PROP_RESULTS");
  const PropertyOutcome o = check_property("PlantedBug", name, 60, rc::detail::toProperty(fn));
  unsetenv("SSMV_CEX_DIR");
  unsetenv("SSMV_SHRINK_STEPS");
  unsetenv("SSMV_SHRINK_SECONDS");
  if (results) setenv("SSMV_PROP_RESULTS", saved.c_str(), 1);
  return o;
}

// The largest shrunk case accepted: drop_d needs one of everything, wrong_group two groups
// (H = G = 2); both shrink to one token (seed 20261130: exactly these sizes).
struct MaxSize {
  int64_t tokens, H, P, N;
};

void expect_round_trip(const PropertyOutcome& o, PlantedBug bug, MaxSize max) {
  ASSERT_FALSE(o.passed) << "the planted bug " << planted_bug_name(bug) << " went unnoticed";
  ASSERT_FALSE(o.counterexample.empty()) << o.message;
  EXPECT_NE(o.message.find("ssmv replay " + o.counterexample), std::string::npos) << o.message;
  EXPECT_NE(o.message.find("RC_PARAMS=\"reproduce="), std::string::npos) << o.message;

  const verify::Counterexample c = verify::read_counterexample(o.counterexample);
  EXPECT_EQ(c.kernel, "ssu");
  EXPECT_EQ(c.planted_bug, planted_bug_name(bug));
  EXPECT_NE(c.reproduce.find("reproduce="), std::string::npos) << c.reproduce;
  PlantedBug parsed;
  ASSERT_TRUE(parse_planted_bug(c.planted_bug, parsed));
  const verify::KernelCheck again = check_planted_ssu(c.decode, parsed);
  EXPECT_EQ(std::string(verify::verdict_name(again.overall())), c.verdict);
  EXPECT_EQ(verify::worst_element_line(again), c.worst);
  EXPECT_TRUE(verify::check_ssu(c.decode, verify::Device::twin).ok())
      << "the correct twin fails the shrunk case too: " << verify::worst_element_line(verify::check_ssu(c.decode, verify::Device::twin));

  const Shape& s = c.decode.problem.shape;
  std::printf("[round trip] %s: shrunk to requests=%lld tokens=%lld H=%lld G=%lld P=%lld N=%lld slots=%lld; %s; "
              "verdict %s; worst %s\n",
              std::string(planted_bug_name(bug)).c_str(), (long long)s.num_sequences(), (long long)s.num_tokens(),
              (long long)s.H, (long long)s.G, (long long)s.P, (long long)s.N, (long long)c.decode.slots,
              describe(c.decode.problem).c_str(), c.verdict.c_str(), c.worst.c_str());
  // Small: a shrinker that stopped early would leave more (cases start with up to 4 requests
  // of 3 tokens, H = 4, P = 8, N = 64).
  EXPECT_LE(s.num_tokens(), max.tokens);
  EXPECT_LE(s.H, max.H);
  EXPECT_LE(s.P, max.P);
  EXPECT_LE(s.N, max.N);
}

TEST(PlantedBug, DropDFailsAndRoundTrips) { 
  expect_round_trip(run_planted("DropD", &drop_d_property), PlantedBug::drop_d, {1, 1, 1, 1});
}

TEST(PlantedBug, WrongGroupFailsAndRoundTrips) {
  expect_round_trip(run_planted("WrongGroup", &wrong_group_property), PlantedBug::wrong_group, {1, 2, 1, 1});
}

// A deliberately failing property whose shrinking takes many steps: it fails every case of
// at least kLargeUpdates state updates (T·H·P·N), so rapidcheck shrinks the shape down to
// that size and then every element of every tensor toward 0 — each accepted, each a step.
constexpr int64_t kLargeUpdates = 256;
int64_t updates(const DecodeProblem& d) {
  const Shape& s = d.problem.shape;
  return s.num_tokens() * s.H * s.P * s.N;
}
void large_cases_fail_property() {
  const GeneratedDecode g = *decode_problem(DecodeOptions{});
  run_case(decode_case(g.decode, verify::Device::twin), [&]() -> std::optional<CaseFailure> {
    if (updates(g.decode) < kLargeUpdates) return std::nullopt;
    return CaseFailure{"VIOLATION", std::to_string(updates(g.decode)) + " state updates",
                       "deliberate failure: at least " + std::to_string(kLargeUpdates) + " state updates"};
  });
}

// The shrink budget, counted in steps (not timed): the unlimited shrink of the property above
// takes `full.shrink_steps` steps (printed); a budget of a tenth of them stops it after exactly
// that many, at a case that still fails, and says so in the message and the file.
TEST(PlantedBug, ShrinkBudgetEndsShrinking) {
  const PropertyOutcome full = run_planted("LargeCasesFail", &large_cases_fail_property, /*shrink_steps=*/0);
  ASSERT_FALSE(full.passed);
  EXPECT_FALSE(full.shrink_budget_ended);
  EXPECT_NE(full.message.find("shrunk to a minimal case in " + std::to_string(full.shrink_steps) + " steps"),
            std::string::npos) << full.message;
  const int64_t budget = full.shrink_steps / 10;
  std::printf("[shrink budget] unlimited shrink: %lld steps; budget: %lld steps\n", (long long)full.shrink_steps,
              (long long)budget);
  ASSERT_GE(budget, 20) << "the shrink is too short to show a budget";

  const PropertyOutcome cut = run_planted("LargeCasesFail", &large_cases_fail_property, budget);
  ASSERT_FALSE(cut.passed);
  EXPECT_TRUE(cut.shrink_budget_ended);
  EXPECT_EQ(cut.shrink_steps, budget);
  const std::string note = "shrinking ended by its budget after " + std::to_string(budget) + " steps";
  EXPECT_NE(cut.message.find(note), std::string::npos) << cut.message;
  EXPECT_NE(cut.message.find("counterexample (smallest case found)"), std::string::npos) << cut.message;
  ASSERT_FALSE(cut.counterexample.empty()) << cut.message;
  const verify::Counterexample c = verify::read_counterexample(cut.counterexample);
  EXPECT_NE(c.reproduce.find(note), std::string::npos) << c.reproduce;
  EXPECT_NE(c.reproduce.find("reproduce="), std::string::npos) << c.reproduce;
  // The reported case still fails, as recorded.
  EXPECT_GE(updates(c.decode), kLargeUpdates);
  EXPECT_EQ(c.worst, std::to_string(updates(c.decode)) + " state updates");
  std::printf("[shrink budget] kept case: %s\n", describe(c.decode.problem).c_str());

  // rapidcheck's reproduce string walks to the same case (the budget truncates the candidate
  // sequences, never reorders them): re-run it as RC_PARAMS="reproduce=..." would.
  const size_t from = c.reproduce.find("RC_PARAMS=\"") + 11, to = c.reproduce.find('"', from);
  ASSERT_NE(to, std::string::npos) << c.reproduce;
  const rc::detail::Configuration config = rc::detail::configFromString(c.reproduce.substr(from, to - from));
  rc::detail::TestMetadata metadata;
  metadata.id = "PlantedBug/LargeCasesFail";
  rc::detail::TestListenerAdapter listener;
  const rc::detail::TestResult again = rc::detail::checkProperty(
      rc::detail::toProperty(&large_cases_fail_property), metadata, rc::detail::TestParams{}, listener, config.reproduce);
  rc::detail::FailureResult failure;
  ASSERT_TRUE(again.match(failure)) << "the reproduce string did not reproduce a failure";
  const verify::Counterexample r = verify::read_counterexample(cut.counterexample);  // rewritten by the re-run
  EXPECT_EQ(describe(r.decode.problem), describe(c.decode.problem));
  EXPECT_EQ(r.decode.problem.x, c.decode.problem.x);
  EXPECT_EQ(r.decode.problem.B, c.decode.problem.B);
  EXPECT_EQ(r.decode.state_pool, c.decode.state_pool);
  EXPECT_EQ(r.worst, c.worst);
}

}  // namespace
}  // namespace ssmv::prop
