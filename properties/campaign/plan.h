// A campaign's plan: which properties, how many cases, in how many units, from which root
// seed. The case space of each property is cut into `units` fixed units (unit k runs
// shard k of `units` exactly as SSMV_SHARD=k/units would: its own seed shard_seed(root,
// property, k) and shard_cases of the total), independent of how many ranks or processes
// run them — so the same plan gives the same units, and the same report, for any R.
// The plan is stored as <campaign folder>/plan.json (schema below, docs/campaigns.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "properties/harness/property.h"
#include "properties/harness/settings.h"
#include "verify/json/json.h"

namespace ssmv::campaign {

struct PlannedProperty {
  std::string id;  // "Suite.Name"
  int64_t base_cases = 0;
  bool needs_gpu = false;
};

struct Plan {
  uint64_t root_seed = prop::kDefaultRootSeed;
  int64_t multiplier = prop::kCampaignMultiplier;  // cases per property: base (or `cases`) × multiplier
  int64_t cases = 0;                               // > 0: every property's count instead of its base
  int64_t units = 16;                              // units per property
  int64_t shrink_steps = prop::kDefaultShrinkSteps;
  std::vector<PlannedProperty> properties;         // sorted by id
};

// A unit: property id and index k in [0, units).
struct Unit {
  std::string property;
  int64_t index = 0;
  bool needs_gpu = false;
  std::string name() const { return property + "#" + std::to_string(index); }  // "SsuContract.StateFp32#3"
};

// Every unit of the plan, property-major (every unit of the first property, then the next
// property's, ...): dealt round-robin to R ranks, each rank gets units/R (±1) units of every
// property, so properties of unequal cost spread evenly when units ≥ R.
std::vector<Unit> all_units(const Plan& plan);
// Parses "Suite.Name#k" against the plan; throws std::invalid_argument naming what is wrong.
Unit parse_unit(const Plan& plan, const std::string& name);

// Total cases of a property, and the cases of its unit k.
int64_t property_cases(const Plan& plan, const PlannedProperty& p);
int64_t unit_cases(const Plan& plan, const PlannedProperty& p, int64_t index);
const PlannedProperty& planned(const Plan& plan, const std::string& id);  // throws if absent

// The harness settings that run unit k of a property (its counterexample goes to cex_file).
prop::RunSettings unit_settings(const Plan& plan, int64_t index, const std::string& cex_file);

// Selects registered properties: "twin" (every property without a GPU), "gpu", "all", or a
// comma-separated list of ids and suite names ("SsuContract,Generators.NormalValuesExact").
// Throws std::invalid_argument for a name that matches nothing.
std::vector<PlannedProperty> select_properties(const std::string& selection);

// Checks that every unit has at least one case; throws std::invalid_argument otherwise.
void validate(const Plan& plan);

json::Value plan_to_json(const Plan& plan);
// Throws std::runtime_error naming `where` and the field for anything malformed.
Plan plan_from_json(const json::Value& v, const std::string& where);
// Same campaign (all fields equal).
bool same_plan(const Plan& a, const Plan& b);

}  // namespace ssmv::campaign
