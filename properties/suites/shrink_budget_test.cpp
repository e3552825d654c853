// The shrink budget (harness/shrink_budget.h): with SSMV_SHRINK_STEPS below the steps an
// unlimited shrink takes, shrinking stops after exactly that many steps, the reported case
// still fails, the message and the file say that the budget ended shrinking, and the
// reproduce string walks to that same case. (The planted-bug catalogue, planted/, checks the
// counterexample round trip of real bugs.)
#include <gtest/gtest.h>
#include <rapidcheck/detail/TestListenerAdapter.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "properties/gen/problem_gen.h"
#include "properties/harness/property.h"
#include "properties/harness/settings.h"
#include "properties/suites/failing_property.h"
#include "verify/reports/counterexample.h"
#include "verify/reports/report_text.h"

namespace ssmv::prop {
namespace {

// Runs a deliberately failing property with counterexamples going to a fresh folder and no
// result file (its failure is expected; a campaign's merged results would count it as one),
// under a shrink budget of `shrink_steps` steps (0: no limit) and no time budget.
PropertyOutcome run_failing(const std::string& name, void (*fn)(), int64_t shrink_steps) {
  // One folder per property: CTest runs these tests in parallel processes.
  const std::filesystem::path dir = std::filesystem::path(testing::TempDir()) / ("ssmv_shrink_budget_cex." + name);
  std::filesystem::remove_all(dir);
  const char* results = std::getenv("SSMV_PROP_RESULTS");
  const std::string saved = results ? results : "";
  setenv("SSMV_CEX_DIR", dir.c_str(), 1);
  setenv("SSMV_SHRINK_STEPS", std::to_string(shrink_steps).c_str(), 1);
  setenv("SSMV_SHRINK_SECONDS", "0", 1);
  unsetenv("SSMV_PROP_RESULTS");
  const PropertyOutcome o = check_property("ShrinkBudget", name, 60, rc::detail::toProperty(fn));
  unsetenv("SSMV_CEX_DIR");
  unsetenv("SSMV_SHRINK_STEPS");
  unsetenv("SSMV_SHRINK_SECONDS");
  if (results) setenv("SSMV_PROP_RESULTS", saved.c_str(), 1);
  return o;
}

// A deliberately failing property whose shrinking takes many steps (failing_property.h): it
// fails every case of at least kLargeUpdates state updates (T·H·P·N).
constexpr int64_t kLargeUpdates = 256;
void large_cases_fail_property() { fail_decode_cases_from(kLargeUpdates); }

// The shrink budget, counted in steps (not timed): the unlimited shrink of the property above
// takes `full.shrink_steps` steps (printed); a budget of a tenth of them stops it after exactly
// that many, at a case that still fails, and says so in the message and the file.
TEST(ShrinkBudget, EndsShrinking) {
  const PropertyOutcome full = run_failing("LargeCasesFail", &large_cases_fail_property, /*shrink_steps=*/0);
  ASSERT_FALSE(full.passed);
  EXPECT_FALSE(full.shrink_budget_ended);
  EXPECT_NE(full.message.find("shrunk to a minimal case in " + std::to_string(full.shrink_steps) + " steps"),
            std::string::npos) << full.message;
  const int64_t budget = full.shrink_steps / 10;
  std::printf("[shrink budget] unlimited shrink: %lld steps; budget: %lld steps\n", (long long)full.shrink_steps,
              (long long)budget);
  ASSERT_GE(budget, 20) << "the shrink is too short to show a budget";

  const PropertyOutcome cut = run_failing("LargeCasesFail", &large_cases_fail_property, budget);
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
  EXPECT_GE(state_updates(c.decode), kLargeUpdates);
  EXPECT_EQ(c.worst, std::to_string(state_updates(c.decode)) + " state updates");
  std::printf("[shrink budget] kept case: %s\n", describe(c.decode.problem).c_str());

  // rapidcheck's reproduce string walks to the same case (the budget truncates the candidate
  // sequences, never reorders them): re-run it as RC_PARAMS="reproduce=..." would.
  const size_t from = c.reproduce.find("RC_PARAMS=\"") + 11, to = c.reproduce.find('"', from);
  ASSERT_NE(to, std::string::npos) << c.reproduce;
  const rc::detail::Configuration config = rc::detail::configFromString(c.reproduce.substr(from, to - from));
  rc::detail::TestMetadata metadata;
  metadata.id = "ShrinkBudget/LargeCasesFail";
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
