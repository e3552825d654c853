// One unit of a campaign, run and stored: the property harness's outcome for shard k of the
// property (prop::check_property_with), as <folder>/units/<Suite.Name>#<k>.json:
//
//   {"schema": "ssmv.campaign.unit.v1", "plan": {...}, "unit": "Suite.Name#k",
//    "property": ..., "index": k, "seed": ..., "planned_cases": ..., "cases_passed": ...,
//    "passed": ..., "tags": {...}, "features": {...},
//    "state_updates": {"cases", "total", "max"}, "bound_usage": {"cases", "max", "bins"},
//    "failure": null | {"verdict", "worst", "shrink_steps", "shrink_budget_ended",
//                       "reproduce", "counterexample_file", "counterexample": {...}},
//    "run": {"seconds", "rank", "device"}}
//
// Everything but "run" depends only on the plan and the unit (the seed), never on which
// rank ran it or when: the report is built from those fields.
#pragma once

#include <string>

#include "properties/campaign/plan.h"
#include "properties/harness/property.h"
#include "verify/json/json.h"

namespace ssmv::campaign {

// Runs the unit (the property must be registered) and returns its record; the counterexample
// file, if any, is written to <dir>/counterexample_file(u) and embedded in the record.
// `rank` and `device` ("twin", "gpu 0", ...) are recorded under "run".
json::Value run_unit(const std::string& dir, const Plan& plan, const Unit& u, int rank, const std::string& device);

// Reads <dir>/units/<u>.json. Returns null when the file does not exist; throws
// std::runtime_error naming the file when it is corrupt or belongs to another plan.
json::Value read_unit(const std::string& dir, const Plan& plan, const Unit& u);

}  // namespace ssmv::campaign
