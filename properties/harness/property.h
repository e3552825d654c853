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
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "properties/harness/feature_count.h"
#include "properties/harness/settings.h"

namespace ssmv::prop {

struct PropertyOutcome {
  bool passed = false;
  int64_t cases = 0;           // cases that passed (before the failure, if any)
  double seconds = 0;
  std::string message;         // on failure: rapidcheck's report, seed, shard, file, reproduce line
  std::string counterexample;  // on failure: the counterexample file, when one was written
  int64_t shrink_steps = 0;    // on failure: shrink candidates tried
  bool shrink_budget_ended = false;  // on failure: the budget, not a minimum, ended shrinking
  // What a campaign (properties/campaign/) merges: the property's seed and planned cases,
  // rapidcheck's tag distribution (successful runs), the feature counts, state-update sizes
  // and bound usages of every case tried (shrink attempts included), and on failure the
  // reproduce line (RC_PARAMS="reproduce=...").
  uint64_t seed = 0;
  int64_t planned_cases = 0;
  std::map<std::string, int64_t> tags, features;
  UpdateStats updates;
  BoundUsageStats bound_usage;
  std::string reproduce;
};

// Runs one property under the environment's settings (settings.h) and prints its summary.
PropertyOutcome check_property(const std::string& suite, const std::string& name, int64_t base_cases,
                               const rc::detail::Property& property);
// check_property under the given settings instead of the environment's (a campaign unit).
PropertyOutcome check_property_with(const RunSettings& s, const std::string& suite, const std::string& name,
                                    int64_t base_cases, const rc::detail::Property& property);

// check_property, failing the current GoogleTest with the outcome's message.
void run_property(const std::string& suite, const std::string& name, int64_t base_cases,
                  const rc::detail::Property& property);

// The property running now ("Suite.Name") and the counterexample file it writes.
const std::string& current_property();
const std::string& current_counterexample_path();

// Every property a test binary holds, for a campaign driver that runs them outside GoogleTest
// (properties/campaign/): suite, name, base case count, whether it needs a CUDA device, and
// the rapidcheck property. SSMV_PROPERTY registers its property here as well as a TEST.
struct RegisteredProperty {
  std::string suite, name;
  int64_t base_cases = 0;
  bool needs_gpu = false;
  std::function<rc::detail::Property()> make;
  bool fails_on_purpose = false;  // meant to fail (campaign tests): a campaign runs it only when named
  std::string id() const { return suite + "." + name; }
};
bool register_property(RegisteredProperty p);  // returns true (for a static initializer)
// Sorted by id.
std::vector<RegisteredProperty> registered_properties();

}  // namespace ssmv::prop

#define SSMV_REGISTER_PROPERTY(Suite, Name, BaseCases, NeedsGpu, Fn)                    \
  [[maybe_unused]] static const bool ssmv_registered_##Suite##_##Name =                \
      ::ssmv::prop::register_property({#Suite, #Name, BaseCases, NeedsGpu,              \
                                       [] { return ::rc::detail::toProperty(&Fn); }})

#define SSMV_PROPERTY(Suite, Name, BaseCases, ArgList)                                  \
  void ssmv_property_##Suite##_##Name ArgList;                                          \
  SSMV_REGISTER_PROPERTY(Suite, Name, BaseCases, false, ssmv_property_##Suite##_##Name); \
  TEST(Suite, Name) {                                                                   \
    ::ssmv::prop::run_property(#Suite, #Name, BaseCases,                                \
                               ::rc::detail::toProperty(&ssmv_property_##Suite##_##Name)); \
  }                                                                                     \
  void ssmv_property_##Suite##_##Name ArgList
