#include "properties/campaign/unit_result.h"

#include <cmath>
#include <filesystem>
#include <stdexcept>

#include "properties/campaign/folder.h"

namespace ssmv::campaign {
namespace {
constexpr const char* kUnitSchema = "ssmv.campaign.unit.v1";

json::Value counts(const std::map<std::string, int64_t>& m) {
  json::Value v = json::Value::object();
  for (const auto& [k, n] : m) v[k] = n;
  return v;
}

// A bound usage as JSON: the number, or "inf" / "nan" (JSON has no non-finite numbers).
json::Value usage_value(double u) {
  if (std::isnan(u)) return "nan";
  if (std::isinf(u)) return "inf";
  return u;
}

const prop::RegisteredProperty& registered(const std::string& id) {
  static const std::vector<prop::RegisteredProperty> all = prop::registered_properties();
  for (const prop::RegisteredProperty& r : all) {
    if (r.id() == id) return r;
  }
  throw std::invalid_argument("property " + id + " is not in this ssmv-campaign binary");
}
}  // namespace

json::Value run_unit(const std::string& dir, const Plan& plan, const Unit& u, int rank, const std::string& device) {
  const prop::RegisteredProperty& r = registered(u.property);
  const std::string cex_rel = counterexample_file(u);
  const std::string cex_abs = dir + "/" + cex_rel;
  const prop::PropertyOutcome o =
      prop::check_property_with(unit_settings(plan, u.index, cex_abs), r.suite, r.name, r.base_cases, r.make());

  json::Value v;
  v["schema"] = kUnitSchema;
  v["plan"] = plan_to_json(plan);
  v["unit"] = u.name();
  v["property"] = u.property;
  v["index"] = u.index;
  v["seed"] = o.seed;
  v["planned_cases"] = o.planned_cases;
  v["cases_passed"] = o.cases;
  v["passed"] = o.passed;
  v["tags"] = counts(o.tags);
  v["features"] = counts(o.features);
  v["state_updates"] = {{"cases", o.updates.cases}, {"total", o.updates.total}, {"max", o.updates.max}};
  v["bound_usage"] = {{"cases", o.bound_usage.cases}, {"max", usage_value(o.bound_usage.max)},
                      {"bins", counts(o.bound_usage.bins)}};
  if (o.passed) {
    v["failure"] = nullptr;
  } else {
    json::Value f;
    f["verdict"] = "FAILED";
    f["worst"] = "";
    f["shrink_steps"] = o.shrink_steps;
    f["shrink_budget_ended"] = o.shrink_budget_ended;
    f["reproduce"] = o.reproduce;
    f["counterexample_file"] = nullptr;
    f["counterexample"] = nullptr;
    if (!o.counterexample.empty() && std::filesystem::exists(cex_abs)) {
      const json::Value cex = read_json(cex_abs);
      f["verdict"] = cex.value("verdict", "FAILED");
      f["worst"] = cex.value("worst", "");
      f["counterexample_file"] = cex_rel;
      f["counterexample"] = cex;
    } else {
      // No counterexample file: the failure did not come through run_case (rapidcheck's own
      // message says what failed; the case is in the reproduce line).
      f["worst"] = "no counterexample file (the failure did not come through run_case)";
    }
    v["failure"] = f;
  }
  v["run"] = {{"seconds", o.seconds}, {"rank", rank}, {"device", device}};
  return v;
}

json::Value read_unit(const std::string& dir, const Plan& plan, const Unit& u) {
  const std::string path = unit_path(dir, u);
  if (!std::filesystem::exists(path)) return nullptr;
  json::Value v;
  try {
    v = read_json(path);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("corrupt unit result ") + e.what() +
                             "; delete the file and run the campaign again to rerun that unit");
  }
  const char* required[] = {"schema", "plan", "unit", "seed", "planned_cases", "cases_passed", "passed", "tags",
                            "features", "state_updates", "bound_usage", "failure"};
  for (const char* f : required) {
    if (!v.is_object() || !v.contains(f)) {
      throw std::runtime_error("corrupt unit result " + path + ": no field '" + f +
                               "'; delete the file and run the campaign again to rerun that unit");
    }
  }
  if (v["schema"] != kUnitSchema || v["unit"] != u.name()) {
    throw std::runtime_error("corrupt unit result " + path + ": not the record of unit " + u.name());
  }
  if (v["plan"] != plan_to_json(plan)) {
    throw std::runtime_error(path + " belongs to another campaign (its plan differs from " + plan_path(dir) +
                             "); use a new campaign folder");
  }
  return v;
}

}  // namespace ssmv::campaign
