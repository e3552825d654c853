// SSMV_PROPERTY: a rapidcheck property as a GoogleTest, like RC_GTEST_PROP, with what
// RC_GTEST_PROP cannot give: a case count per property (scaled by campaign mode and split by
// shard, settings.h), a seed derived per property and shard from one root seed, a one-line
// summary with cases per second, a budget on shrinking (shrink_budget.h), and on failure a
// message naming the seed, the shard, the shrink steps (and whether the budget ended
// shrinking), the counterexample file, `ssmv replay FILE` and the RC_PARAMS reproduce line.
//
//   SSMV_PROPERTY(SsuContract, StateFp32, 40, (const GeneratedDecode& g)) { ... RC_ASSERT ... }
//
// The id rapidcheck keys reproduce strings by is "Suite/Name", as with RC_GTEST_PROP.
#pragma once

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <cstdint>
#include <string>

namespace ssmv::prop {

struct PropertyOutcome {
  bool passed = false;
  int64_t cases = 0;           // cases that passed (before the failure, if any)
  double seconds = 0;
  std::string message;         // on failure: rapidcheck's report, seed, shard, file, reproduce line
  std::string counterexample;  // on failure: the counterexample file, when one was written
  int64_t shrink_steps = 0;    // on failure: shrink candidates tried
  bool shrink_budget_ended = false;  // on failure: the budget, not a minimum, ended shrinking
};

// Runs one property under the environment's settings (settings.h) and prints its summary.
PropertyOutcome check_property(const std::string& suite, const std::string& name, int64_t base_cases,
                               const rc::detail::Property& property);

// check_property, failing the current GoogleTest with the outcome's message.
void run_property(const std::string& suite, const std::string& name, int64_t base_cases,
                  const rc::detail::Property& property);

// The property running now ("Suite.Name") and the counterexample file it writes.
const std::string& current_property();
const std::string& current_counterexample_path();

}  // namespace ssmv::prop

#define SSMV_PROPERTY(Suite, Name, BaseCases, ArgList)                                  \
  void ssmv_property_##Suite##_##Name ArgList;                                          \
  TEST(Suite, Name) {                                                                   \
    ::ssmv::prop::run_property(#Suite, #Name, BaseCases,                                \
                               ::rc::detail::toProperty(&ssmv_property_##Suite##_##Name)); \
  }                                                                                     \
  void ssmv_property_##Suite##_##Name ArgList
