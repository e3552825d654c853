#include "properties/campaign/plan.h"

#include <algorithm>
#include <stdexcept>

namespace ssmv::campaign {
namespace {
constexpr const char* kPlanSchema = "ssmv.campaign.plan.v1";

template <typename T>
T field(const json::Value& v, const char* name, const std::string& where) {
  if (!v.is_object() || !v.contains(name)) throw std::runtime_error(where + ": missing field '" + name + "'");
  try {
    return v.at(name).get<T>();
  } catch (const std::exception&) {
    throw std::runtime_error(where + ": field '" + name + "' has the wrong type");
  }
}
}  // namespace

std::vector<Unit> all_units(const Plan& plan) {
  std::vector<Unit> units;
  for (const PlannedProperty& p : plan.properties) {
    for (int64_t k = 0; k < plan.units; ++k) units.push_back(Unit{p.id, k, p.needs_gpu});
  }
  return units;
}

const PlannedProperty& planned(const Plan& plan, const std::string& id) {
  for (const PlannedProperty& p : plan.properties) {
    if (p.id == id) return p;
  }
  throw std::invalid_argument("property '" + id + "' is not in this campaign's plan");
}

Unit parse_unit(const Plan& plan, const std::string& name) {
  const size_t hash = name.rfind('#');
  if (hash == std::string::npos) throw std::invalid_argument("unit '" + name + "': expected Suite.Name#k");
  const PlannedProperty& p = planned(plan, name.substr(0, hash));
  const std::string k = name.substr(hash + 1);
  size_t used = 0;
  long long index = -1;
  try {
    index = std::stoll(k, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (k.empty() || used != k.size() || index < 0 || index >= plan.units) {
    throw std::invalid_argument("unit '" + name + "': k must be in [0, " + std::to_string(plan.units) + ")");
  }
  return Unit{p.id, index, p.needs_gpu};
}

prop::RunSettings unit_settings(const Plan& plan, int64_t index, const std::string& cex_file) {
  prop::RunSettings s;
  s.root_seed = plan.root_seed;
  s.max_success_override = plan.cases;
  s.multiplier = plan.multiplier;
  s.shard = index;
  s.shards = plan.units;
  s.cex_file = cex_file;
  s.shrink_steps = plan.shrink_steps;
  // No time budget: shrinking ends by steps only, so a unit's result (its shrunk case, the
  // counts of shrink attempts) does not depend on the machine's speed.
  s.shrink_seconds = 0;
  return s;
}

int64_t property_cases(const Plan& plan, const PlannedProperty& p) {
  return (plan.cases > 0 ? plan.cases : p.base_cases) * plan.multiplier;
}

int64_t unit_cases(const Plan& plan, const PlannedProperty& p, int64_t index) {
  return prop::shard_cases(p.base_cases, unit_settings(plan, index, ""));
}

std::vector<PlannedProperty> select_properties(const std::string& selection) {
  const std::vector<prop::RegisteredProperty> all = prop::registered_properties();
  std::vector<PlannedProperty> out;
  auto add = [&](const prop::RegisteredProperty& r) {
    for (const PlannedProperty& p : out) {
      if (p.id == r.id()) return;
    }
    out.push_back(PlannedProperty{r.id(), r.base_cases, r.needs_gpu});
  };
  size_t start = 0;
  while (start <= selection.size()) {
    const size_t comma = selection.find(',', start);
    const std::string name = selection.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    start = comma == std::string::npos ? selection.size() + 1 : comma + 1;
    if (name.empty()) continue;
    bool matched = false;
    for (const prop::RegisteredProperty& r : all) {
      const bool in_group = !r.fails_on_purpose && (name == "all" || (name == "twin" && !r.needs_gpu) ||
                                           (name == "gpu" && r.needs_gpu) || name == r.suite);
      if (in_group || name == r.id()) {
        add(r);
        matched = true;
      }
    }
    if (!matched) {
      throw std::invalid_argument("--properties: '" + name +
                                  "' matches no property (ssmv-campaign list prints them; or twin, gpu, all)");
    }
  }
  if (out.empty()) throw std::invalid_argument("--properties: nothing selected");
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  return out;
}

void validate(const Plan& plan) {
  if (plan.units < 1) throw std::invalid_argument("--units must be at least 1");
  if (plan.multiplier < 1) throw std::invalid_argument("--multiplier must be at least 1");
  if (plan.cases < 0) throw std::invalid_argument("--cases must be at least 1");
  for (const PlannedProperty& p : plan.properties) {
    const int64_t total = property_cases(plan, p);
    if (total < plan.units) {
      throw std::invalid_argument(p.id + " has " + std::to_string(total) + " cases, fewer than the " +
                                  std::to_string(plan.units) + " units: lower --units or raise --cases");
    }
  }
}

json::Value plan_to_json(const Plan& plan) {
  json::Value v;
  v["schema"] = kPlanSchema;
  v["root_seed"] = plan.root_seed;
  v["multiplier"] = plan.multiplier;
  v["cases"] = plan.cases;
  v["units"] = plan.units;
  v["shrink_steps"] = plan.shrink_steps;
  v["properties"] = json::Value::array();
  for (const PlannedProperty& p : plan.properties) {
    v["properties"].push_back({{"id", p.id}, {"base_cases", p.base_cases}, {"needs_gpu", p.needs_gpu}});
  }
  return v;
}

Plan plan_from_json(const json::Value& v, const std::string& where) {
  if (field<std::string>(v, "schema", where) != kPlanSchema) {
    throw std::runtime_error(where + ": schema is not " + std::string(kPlanSchema));
  }
  Plan plan;
  plan.root_seed = field<uint64_t>(v, "root_seed", where);
  plan.multiplier = field<int64_t>(v, "multiplier", where);
  plan.cases = field<int64_t>(v, "cases", where);
  plan.units = field<int64_t>(v, "units", where);
  plan.shrink_steps = field<int64_t>(v, "shrink_steps", where);
  const json::Value props = field<json::Value>(v, "properties", where);
  if (!props.is_array() || props.empty()) throw std::runtime_error(where + ": 'properties' must be a non-empty array");
  for (const json::Value& p : props) {
    plan.properties.push_back(PlannedProperty{field<std::string>(p, "id", where), field<int64_t>(p, "base_cases", where),
                                              field<bool>(p, "needs_gpu", where)});
  }
  try {
    validate(plan);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(where + ": " + e.what());
  }
  return plan;
}

bool same_plan(const Plan& a, const Plan& b) { return plan_to_json(a) == plan_to_json(b); }

}  // namespace ssmv::campaign
