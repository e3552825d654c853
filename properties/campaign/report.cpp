#include "properties/campaign/report.h"

#include <sys/stat.h>

#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "properties/campaign/folder.h"
#include "properties/campaign/unit_result.h"

namespace ssmv::campaign {
namespace {
constexpr const char* kReportSchema = "ssmv.campaign.report.v1";

void add_counts(json::Value& into, const json::Value& from) {
  for (const auto& [k, n] : from.items()) into[k] = into.value(k, int64_t{0}) + n.get<int64_t>();
}

// Bound usages compare as numbers, "inf" above every number, "nan" above all (a finding).
int usage_rank(const json::Value& u) { return u.is_string() ? (u == "nan" ? 2 : 1) : 0; }
bool usage_less(const json::Value& a, const json::Value& b) {
  if (usage_rank(a) != usage_rank(b)) return usage_rank(a) < usage_rank(b);
  return usage_rank(a) == 0 && a.get<double>() < b.get<double>();
}

std::string shell_quote(const std::string& s) {
  if (s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./#:=,") ==
      std::string::npos) {
    return s;
  }
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Merges one unit record into its property's entry.
void merge_unit(json::Value& p, const json::Value& u) {
  p["units_done"] = p["units_done"].get<int64_t>() + 1;
  p["cases_passed"] = p["cases_passed"].get<int64_t>() + u.at("cases_passed").get<int64_t>();
  add_counts(p["tags"], u.at("tags"));
  add_counts(p["features"], u.at("features"));
  json::Value& su = p["state_updates"];
  const json::Value& usu = u.at("state_updates");
  su["cases"] = su["cases"].get<int64_t>() + usu.at("cases").get<int64_t>();
  su["total"] = su["total"].get<int64_t>() + usu.at("total").get<int64_t>();
  su["max"] = std::max(su["max"].get<int64_t>(), usu.at("max").get<int64_t>());
  json::Value& bu = p["bound_usage"];
  const json::Value& ubu = u.at("bound_usage");
  bu["cases"] = bu["cases"].get<int64_t>() + ubu.at("cases").get<int64_t>();
  if (usage_less(bu["max"], ubu.at("max"))) bu["max"] = ubu.at("max");
  add_counts(bu["bins"], ubu.at("bins"));
  if (!u.at("passed").get<bool>()) {
    p["failed_units"].push_back(u.at("index"));
    const json::Value& f = u.at("failure");
    p["counterexamples"].push_back({{"unit", u.at("unit")},
                                    {"file", f.at("counterexample_file")},
                                    {"verdict", f.at("verdict")},
                                    {"worst", f.at("worst")},
                                    {"shrink_steps", f.at("shrink_steps")},
                                    {"shrink_budget_ended", f.at("shrink_budget_ended")},
                                    {"reproduce", f.at("reproduce")}});
  }
}

std::string usage_text(const json::Value& u) {
  if (u.is_string()) return u.get<std::string>();
  std::ostringstream os;
  os.precision(3);
  os << u.get<double>();
  return os.str();
}
}  // namespace

json::Value build_report(const std::string& dir, const Plan& plan, const std::string& program) {
  json::Value report;
  report["schema"] = kReportSchema;
  report["status"] = "complete";
  report["verdict"] = "PASS";
  report["plan"] = plan_to_json(plan);
  json::Value props = json::Value::array();
  json::Value missing = json::Value::array();
  int64_t units_done = 0, planned_total = 0, passed_total = 0, failed_props = 0, cexs = 0;
  const std::string folder = shell_quote(std::filesystem::absolute(dir).lexically_normal().string());
  for (const PlannedProperty& pp : plan.properties) {
    json::Value p;
    p["property"] = pp.id;
    p["needs_gpu"] = pp.needs_gpu;
    p["verdict"] = "PASS";
    p["units"] = plan.units;
    p["units_done"] = 0;
    p["cases_planned"] = property_cases(plan, pp);
    p["cases_passed"] = 0;
    p["failed_units"] = json::Value::array();
    p["tags"] = json::Value::object();
    p["features"] = json::Value::object();
    p["state_updates"] = {{"cases", 0}, {"total", 0}, {"max", 0}};
    p["bound_usage"] = {{"cases", 0}, {"max", 0.0}, {"bins", json::Value::object()}};
    p["counterexamples"] = json::Value::array();
    for (int64_t k = 0; k < plan.units; ++k) {
      const Unit unit{pp.id, k, pp.needs_gpu};
      const json::Value u = read_unit(dir, plan, unit);
      if (u.is_null()) {
        missing.push_back({{"unit", unit.name()},
                           {"rerun", program + " run " + folder + " --only " + shell_quote(unit.name())}});
        continue;
      }
      try {
        merge_unit(p, u);
      } catch (const json::Value::exception& e) {
        throw std::runtime_error("corrupt unit result " + unit_path(dir, unit) + ": " + e.what() +
                                 "; delete the file and run the campaign again to rerun that unit");
      }
    }
    if (!p["failed_units"].empty()) {
      p["verdict"] = "FAIL";
      ++failed_props;
    } else if (p["units_done"] != plan.units) {
      p["verdict"] = "INCOMPLETE";
    }
    units_done += p["units_done"].get<int64_t>();
    planned_total += p["cases_planned"].get<int64_t>();
    passed_total += p["cases_passed"].get<int64_t>();
    cexs += int64_t(p["counterexamples"].size());
    props.push_back(std::move(p));
  }
  if (!missing.empty()) report["status"] = "incomplete";
  report["verdict"] = failed_props > 0 ? "FAIL" : (missing.empty() ? "PASS" : "INCOMPLETE");
  report["totals"] = {{"properties", int64_t(plan.properties.size())},
                      {"units", int64_t(plan.properties.size()) * plan.units},
                      {"units_done", units_done},
                      {"cases_planned", planned_total},
                      {"cases_passed", passed_total},
                      {"failed_properties", failed_props},
                      {"counterexamples", cexs}};
  report["properties"] = std::move(props);
  report["missing"] = std::move(missing);
  report["resume"] = report["missing"].empty() ? json::Value(nullptr) : json::Value(program + " run " + folder);
  return report;
}

std::string report_markdown(const json::Value& r) {
  std::ostringstream md;
  const json::Value& plan = r.at("plan");
  const json::Value& t = r.at("totals");
  md << "# ssmv campaign report\n\n"
     << "Verdict **" << r.at("verdict").get<std::string>() << "** (" << r.at("status").get<std::string>() << "): "
     << t.at("units_done") << " of " << t.at("units") << " units, " << t.at("cases_passed") << " of "
     << t.at("cases_planned") << " planned cases passed, " << t.at("failed_properties") << " properties failed, "
     << t.at("counterexamples") << " counterexamples.\n\n"
     << "Root seed " << plan.at("root_seed") << ", " << plan.at("units") << " units per property, cases "
     << (plan.at("cases").get<int64_t>() > 0 ? plan.at("cases").dump() : std::string("base")) << " x "
     << plan.at("multiplier") << ", shrink budget " << plan.at("shrink_steps") << " steps.\n\n"
     << "| property | verdict | units | cases passed / planned | max bound usage | bound usage (cases per bin, upper edges) | state updates: mean, max |\n"
     << "|---|---|---|---|---|---|---|\n";
  for (const json::Value& p : r.at("properties")) {
    const json::Value& bu = p.at("bound_usage");
    std::string bins;
    for (const char* edge : {"0", "2^-10", "2^-6", "2^-4", "2^-2", "2^-1", "1", "inf", "exact_overflow"}) {  // bound_usage_bin's
      if (bu.at("bins").contains(edge)) bins += (bins.empty() ? "" : ", ") + std::string(edge) + ": " + bu.at("bins").at(edge).dump();
    }
    const json::Value& su = p.at("state_updates");
    const int64_t su_cases = su.at("cases").get<int64_t>();
    md << "| " << p.at("property").get<std::string>() << " | " << p.at("verdict").get<std::string>() << " | "
       << p.at("units_done") << "/" << p.at("units") << " | " << p.at("cases_passed") << " / " << p.at("cases_planned")
       << " | " << (bu.at("cases").get<int64_t>() > 0 ? usage_text(bu.at("max")) : std::string("–")) << " | "
       << (bins.empty() ? std::string("–") : bins) << " | "
       << (su_cases > 0 ? std::to_string(su.at("total").get<int64_t>() / su_cases) + ", " + su.at("max").dump()
                        : std::string("–"))
       << " |\n";
  }
  md << "\n## Features drawn (cases, shrink attempts included)\n\n";
  for (const json::Value& p : r.at("properties")) {
    std::string f;
    for (const auto& [label, n] : p.at("features").items()) f += (f.empty() ? "" : ", ") + label + " " + n.dump();
    md << "* " << p.at("property").get<std::string>() << ": " << (f.empty() ? std::string("none counted") : f) << "\n";
  }
  md << "\n## Counterexamples\n\n";
  bool any = false;
  for (const json::Value& p : r.at("properties")) {
    for (const json::Value& c : p.at("counterexamples")) {
      any = true;
      md << "* " << c.at("unit").get<std::string>() << ": " << c.at("verdict").get<std::string>() << ", "
         << c.at("worst").get<std::string>() << "; file `"
         << (c.at("file").is_null() ? std::string("none") : c.at("file").get<std::string>()) << "` (`ssmv replay` it); "
         << c.at("reproduce").get<std::string>() << "\n";
    }
  }
  if (!any) md << "None.\n";
  md << "\n## Missing units\n\n";
  if (r.at("missing").empty()) {
    md << "None: the campaign is complete.\n";
  } else {
    md << "Rerun all of them: `" << r.at("resume").get<std::string>() << "`; or one:\n\n";
    for (const json::Value& m : r.at("missing")) {
      md << "* " << m.at("unit").get<std::string>() << ": `" << m.at("rerun").get<std::string>() << "`\n";
    }
  }
  return md.str();
}

namespace {
// Under the folder lock: marks the scan's start, then builds and writes the report.
json::Value rebuild_locked(const std::string& dir, const Plan& plan, const std::string& program) {
  write_text_atomically(dir + "/.report-scan", "");
  json::Value report = build_report(dir, plan, program);
  write_json_atomically(dir + "/report.json", report);
  write_text_atomically(dir + "/report.md", report_markdown(report));
  return report;
}
}  // namespace

json::Value write_report(const std::string& dir, const Plan& plan, const std::string& program) {
  json::Value report;
  with_folder_lock(dir, [&] { report = rebuild_locked(dir, plan, program); });
  return report;
}

void refresh_report(const std::string& dir, const Plan& plan, const std::string& program, const std::string& unit_file) {
  with_folder_lock(dir, [&] {
    // The unit file's ctime is its rename into place (its mtime is the earlier write of the
    // temporary file); the marker's mtime precedes the scan that followed it.
    struct stat marker {}, unit {};
    const auto later = [](const timespec& a, const timespec& b) {
      return a.tv_sec != b.tv_sec ? a.tv_sec > b.tv_sec : a.tv_nsec > b.tv_nsec;
    };
    if (::stat((dir + "/.report-scan").c_str(), &marker) == 0 && ::stat(unit_file.c_str(), &unit) == 0 &&
        later(marker.st_mtim, unit.st_ctim)) {
      return;  // a scan that began after the unit file was in place has written its report
    }
    rebuild_locked(dir, plan, program);
  });
}

}  // namespace ssmv::campaign
