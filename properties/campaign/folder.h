// The campaign folder: where a campaign keeps its plan, its unit results, the counterexample
// files and the report (docs/campaigns.md, "Reading a campaign"):
//
//   plan.json                              the plan (plan.h)
//   units/<Suite.Name>#<k>.json            one finished unit each (unit_result.h)
//   counterexamples/<Suite.Name>.unit<k>.json   a failing unit's counterexample
//   report.json, report.md                 the campaign report (report.h)
//
// Every file is written atomically (temporary file + fsync + rename), so a killed process
// leaves whole files or none.
#pragma once

#include <functional>
#include <string>

#include "properties/campaign/plan.h"
#include "verify/json/json.h"

namespace ssmv::campaign {

std::string plan_path(const std::string& dir);
std::string unit_path(const std::string& dir, const Unit& u);
// Relative to the folder (as the report names it).
std::string counterexample_file(const Unit& u);

void write_json_atomically(const std::string& path, const json::Value& v);
void write_text_atomically(const std::string& path, const std::string& text);
// Reads and parses a JSON file; throws std::runtime_error naming the file and the reason.
json::Value read_json(const std::string& path);

// Runs `fn` holding an exclusive lock on <dir>/.lock (flock): the processes of a campaign
// rewrite the report one at a time.
void with_folder_lock(const std::string& dir, const std::function<void()>& fn);

}  // namespace ssmv::campaign
