#include "properties/harness/property.h"

#include <rapidcheck/detail/TestListenerAdapter.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "properties/harness/feature_count.h"
#include "properties/harness/settings.h"
#include "properties/harness/shrink_budget.h"
#include "verify/reports/counterexample.h"

namespace ssmv::prop {
namespace {

std::string& property_now() {
  static std::string id;
  return id;
}
std::string& cex_path_now() {
  static std::string path;
  return path;
}

std::string json_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    out += c;
  }
  return out;
}

// A case's tag set as one label: "realistic, bf16".
std::string tag_key(const std::vector<std::string>& tag_set) {
  std::string key;
  for (const std::string& t : tag_set) key += (key.empty() ? "" : ", ") + t;
  return key;
}

// The counts a campaign merges (PropertyOutcome), from the harness's counters.
void record_counts(PropertyOutcome& o, const rc::detail::TestParams& params) {
  o.seed = params.seed;
  o.planned_cases = params.maxSuccess;
  o.features = feature_counts();
  o.updates = update_stats();
  o.bound_usage = bound_usage_stats();
}

// One JSON object per property run and shard, merged by properties/merge_results.py.
void write_result(const RunSettings& s, const std::string& id, uint64_t seed, int64_t cases,
                  bool passed, double seconds, const rc::detail::Distribution& tags) {
  if (s.results_dir.empty()) return;
  std::filesystem::create_directories(s.results_dir);
  const std::string path = s.results_dir + "/" + id + ".shard" + std::to_string(s.shard) + "of" +
                           std::to_string(s.shards) + ".json";
  std::ofstream out(path);
  out << std::setprecision(6) << "{\"property\": \"" << id << "\", \"root_seed\": " << s.root_seed
      << ", \"shard\": " << s.shard << ", \"shards\": " << s.shards << ", \"seed\": " << seed
      << ", \"multiplier\": " << s.multiplier << ", \"cases\": " << cases
      << ", \"passed\": " << (passed ? "true" : "false") << ", \"seconds\": " << seconds
      << ", \"tags\": {";
  bool first = true;
  for (const auto& [tag_set, count] : tags) {
    out << (first ? "" : ", ") << "\"" << json_escape(tag_key(tag_set)) << "\": " << count;
    first = false;
  }
  out << "}, \"features\": {";
  first = true;
  for (const auto& [label, count] : feature_counts()) {
    out << (first ? "" : ", ") << "\"" << json_escape(label) << "\": " << count;
    first = false;
  }
  out << "}}\n";
  if (!out) throw std::runtime_error("cannot write property result " + path);
}

std::string features_line() {
  std::ostringstream os;
  for (const auto& [label, count] : feature_counts()) os << " " << label << "=" << count;
  const UpdateStats& u = update_stats();
  if (u.cases > 0) os << "; state updates T·H·P·N per case: mean " << u.total / u.cases << ", max " << u.max;
  return os.str();
}

// How shrinking ended, one line (the failure message and the counterexample's reproduce field).
std::string shrink_note(const ShrinkBudget& b, bool reproducing) {
  std::ostringstream os;
  if (reproducing) {
    os << "reproduced along rapidcheck's shrink path (no shrinking)";
  } else if (b.ended_shrinking()) {
    os << "shrinking ended by its budget after " << b.steps() << " steps (SSMV_SHRINK_STEPS=" << b.max_steps()
       << ", SSMV_SHRINK_SECONDS=" << b.max_seconds()
       << "): the smallest failing case found so far, not a minimal one; raise the budget to shrink further";
  } else {
    os << "shrunk to a minimal case in " << b.steps() << " steps";
  }
  return os.str();
}

}  // namespace

const std::string& current_property() { return property_now(); }
const std::string& current_counterexample_path() { return cex_path_now(); }

PropertyOutcome check_property(const std::string& suite, const std::string& name, int64_t base_cases,
                               const rc::detail::Property& property) {
  return check_property_with(settings_from_environment(), suite, name, base_cases, property);
}

PropertyOutcome check_property_with(const RunSettings& s, const std::string& suite, const std::string& name,
                                    int64_t base_cases, const rc::detail::Property& property) {
  const std::string id = suite + "." + name;
  property_now() = id;
  cex_path_now() = s.cex_file.empty() ? s.cex_dir + "/" + id + ".json" : s.cex_file;
  std::filesystem::remove(cex_path_now());  // a file left from an earlier run is not this run's
  reset_feature_counts();

  rc::detail::TestMetadata metadata;
  metadata.id = suite + "/" + name;  // rapidcheck's reproduce key, as RC_GTEST_PROP names it
  metadata.description = name;
  rc::detail::TestParams params = rc::detail::configuration().testParams;
  params.seed = shard_seed(s.root_seed, id, s.shard);
  params.maxSuccess = int(shard_cases(base_cases, s));
  params.maxSize = s.max_size;
  rc::detail::TestListenerAdapter listener;
  // A reproduce run walks rapidcheck's shrink path without shrinking: no budget applies.
  const auto& reproduce_map = rc::detail::configuration().reproduce;
  const bool reproducing = reproduce_map.count(metadata.id) > 0;
  auto budget = std::make_shared<ShrinkBudget>(s.shrink_steps, s.shrink_seconds);

  const auto start = std::chrono::steady_clock::now();  // timing only, never a seed
  const rc::detail::TestResult result = rc::detail::checkProperty(
      reproducing ? property : with_shrink_budget(property, budget), metadata, params, listener, reproduce_map);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::ostringstream where;
  where << "root seed " << s.root_seed << " (RC_PARAMS=\"seed=" << s.root_seed << "\"), shard "
        << s.shard << "/" << s.shards << " seed " << params.seed << ", " << params.maxSuccess
        << " cases (base " << base_cases << " x " << s.multiplier << "), max_size " << params.maxSize;

  rc::detail::SuccessResult success;
  if (result.match(success)) {
    std::printf("[property] %s: %d cases in %.2f s (%.2f cases/s); %s\n[property] features:%s\n",
                id.c_str(), success.numSuccess, seconds, success.numSuccess / std::max(seconds, 1e-9),
                where.str().c_str(), features_line().c_str());
    std::ostringstream dist;
    rc::detail::printResultMessage(result, dist);
    std::printf("%s\n", dist.str().c_str());
    write_result(s, id, params.seed, success.numSuccess, true, seconds, success.distribution);
    PropertyOutcome outcome;
    outcome.passed = true;
    outcome.cases = success.numSuccess;
    outcome.seconds = seconds;
    record_counts(outcome, params);
    for (const auto& [tag_set, count] : success.distribution) outcome.tags[tag_key(tag_set)] += count;
    return outcome;
  }

  std::ostringstream msg;
  rc::detail::printResultMessage(result, msg);
  msg << "\n" << id << ": " << where.str() << "\n";
  PropertyOutcome outcome;
  outcome.seconds = seconds;
  record_counts(outcome, params);
  rc::detail::FailureResult failure;
  if (result.match(failure)) {
    outcome.cases = failure.numSuccess;
    outcome.shrink_steps = budget->steps();
    outcome.shrink_budget_ended = budget->ended_shrinking();
    const std::string shrinking = shrink_note(*budget, reproducing);
    msg << shrinking << "\n";
    rc::detail::Configuration repro;  // defaults everywhere: the string holds only reproduce=
    repro.reproduce[metadata.id] = failure.reproduce;
    const std::string reproduce = "RC_PARAMS=\"" + rc::detail::configToMinimalString(repro) + "\"";
    outcome.reproduce = reproduce;
    if (std::filesystem::exists(cex_path_now())) {
      verify::Counterexample c = verify::read_counterexample(cex_path_now());
      c.reproduce = reproduce + " (" + where.str() + "; " + shrinking + ")";
      verify::write_counterexample(cex_path_now(), c);
      outcome.counterexample = cex_path_now();
      msg << "counterexample (" << (outcome.shrink_budget_ended ? "smallest case found" : "minimal case")
          << "): " << cex_path_now() << "\n"
          << "replay it: ssmv replay " << cex_path_now() << "\n";
    } else {
      msg << "no counterexample file: the failure did not come through run_case\n";
    }
    const std::string program = ::testing::internal::GetArgvs().empty() ? "<test binary>"
                                                                         : ::testing::internal::GetArgvs()[0];
    msg << "reproduce: " << reproduce << " " << program << " --gtest_filter=" << suite << "." << name << "\n";
    write_result(s, id, params.seed, failure.numSuccess, false, seconds, {});
  } else {
    write_result(s, id, params.seed, 0, false, seconds, {});
  }
  outcome.message = msg.str();
  return outcome;
}

void run_property(const std::string& suite, const std::string& name, int64_t base_cases,
                  const rc::detail::Property& property) {
  const PropertyOutcome o = check_property(suite, name, base_cases, property);
  if (!o.passed) FAIL() << o.message;
}

}  // namespace ssmv::prop
