// The campaign report: every unit result of the folder merged per property — cases,
// rapidcheck tags, feature counts, state-update sizes, the bound-usage distribution, every
// counterexample — plus the units still missing and the command that reruns each. The same
// schema whatever the number of ranks; built only from the plan and the units' rank-free
// fields, so equal campaigns give byte-identical report.json and report.md.
//
//   {"schema": "ssmv.campaign.report.v1", "status": "complete" | "incomplete",
//    "verdict": "PASS" | "FAIL" | "INCOMPLETE", "plan": {...},
//    "totals": {"properties", "units", "units_done", "cases_planned", "cases_passed",
//               "failed_properties", "counterexamples"},
//    "properties": [{"property", "needs_gpu", "verdict", "units", "units_done",
//                    "cases_planned", "cases_passed", "failed_units", "tags", "features",
//                    "state_updates", "bound_usage", "counterexamples": [...]}],
//    "missing": [{"unit", "rerun"}], "resume": "<command>"}
#pragma once

#include <string>

#include "properties/campaign/plan.h"
#include "verify/json/json.h"

namespace ssmv::campaign {

// Builds the report from <dir>'s unit files; `program` is the command the rerun lines name.
// Throws std::runtime_error for a corrupt unit file (read_unit).
json::Value build_report(const std::string& dir, const Plan& plan, const std::string& program);
std::string report_markdown(const json::Value& report);

// Builds the report and writes report.json and report.md atomically, under the folder lock.
json::Value write_report(const std::string& dir, const Plan& plan, const std::string& program);

}  // namespace ssmv::campaign
