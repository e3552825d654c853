// The catalogue's test, run by `ssmv-planted-<name> catalogue` (CTest: planted.<name>, label
// property): the kernel's contract properties (properties/suites/contract_properties.h: the
// same properties, seeds and case counts as the CI suites) on this binary's broken twin.
//
// semantic and precision bugs: some property fails with a VIOLATION, shrunk to a
//   counterexample file that names the bug, which
//   * re-judges in process to the recorded verdict and worst element,
//   * `ssmv-planted-<name> replay FILE` (this binary: ssmv with the bug) reproduces (exit 1),
//   * `ssmv replay FILE` (the bundled twin) passes (exit 0): the bug, not the data, fails it;
//   the properties run in order and stop at the first failure.
// rounding_path changes: every property passes its full CI case count.
//
// The outcome goes to $SSMV_PLANTED_RESULTS/<name>.json (when set) for the catalogue's
// summary (summary.py: per-class counts, counterexample sizes, docs/planted-bugs.md).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "properties/harness/property.h"
#include "properties/planted/catalogue.h"
#include "properties/suites/contract_properties.h"
#include "verify/cli/dispatch.h"
#include "verify/json/json.h"
#include "verify/reports/counterexample.h"
#include "verify/reports/report_text.h"
#include "verify/run/kernel_check.h"

#ifndef SSMV_BINARY
#error "SSMV_BINARY (the bundled ssmv executable) is set by properties/planted/CMakeLists.txt"
#endif

namespace ssmv::prop {
namespace {

const Shape& shape_of(const verify::Counterexample& c) {
  return c.kernel == "ssu" ? c.decode.problem.shape : c.problem.shape;
}

// Exit status of `command` run by the shell (output to `log`).
int run_shell(const std::string& command, const std::filesystem::path& log) {
  const int status = std::system((command + " > '" + log.string() + "' 2>&1").c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

void write_result(const json::Value& result) {
  const char* dir = std::getenv("SSMV_PLANTED_RESULTS");
  if (!dir || !*dir) return;
  std::filesystem::create_directories(dir);
  const std::filesystem::path path = std::filesystem::path(dir) / (std::string(kPlantedBugName) + ".json");
  const std::filesystem::path tmp = path.string() + ".tmp";
  std::ofstream(tmp) << result.dump(2) << "\n";
  std::filesystem::rename(tmp, path);
}

TEST(PlantedBug, CaughtOrPasses) {
  const PlantedBug& bug = find_planted_bug(catalogue(), kPlantedBugName);
  std::printf("[planted] %s (%s, %s): %s\n", bug.name.c_str(), bug.kernel.c_str(),
              std::string(bug_class_name(bug.bug_class)).c_str(), bug.slip.c_str());
  const auto start = std::chrono::steady_clock::now();
  json::Value result = {{"name", bug.name}, {"kernel", bug.kernel}, {"class", bug_class_name(bug.bug_class)}, {"slip", bug.slip}};

  std::optional<PropertyOutcome> failure;
  std::string failed_property;
  int64_t cases = 0;
  for (const ContractProperty& p : contract_properties(bug.kernel, bug.name)) {
    const PropertyOutcome o = check_property(p.suite, p.name, p.base_cases, rc::detail::toProperty(p.body));
    cases += o.cases;
    if (!o.passed) {
      failure = o;
      failed_property = p.suite + "." + p.name;
      if (must_be_caught(bug.bug_class)) break;  // one counterexample is the proof
      ADD_FAILURE() << bug.name << " is a rounding-path change, not a bug, and must pass; " << failed_property
                    << " failed:\n" << o.message;
    }
  }
  result["cases"] = cases;
  result["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  if (!must_be_caught(bug.bug_class)) {
    result["outcome"] = failure ? "caught" : "passed";
    write_result(result);
    return;
  }
  result["outcome"] = failure ? "caught" : "missed";
  if (!failure) {
    write_result(result);
    FAIL() << "the planted bug " << bug.name << " went unnoticed by " << cases << " cases of the " << bug.kernel
           << " contract properties";
  }
  result["property"] = failed_property;
  result["shrink_steps"] = failure->shrink_steps;
  result["shrink_budget_ended"] = failure->shrink_budget_ended;
  ASSERT_FALSE(failure->counterexample.empty()) << failure->message;
  const verify::Counterexample c = verify::read_counterexample(failure->counterexample);
  const Shape& s = shape_of(c);
  result["counterexample"] = {{"file", failure->counterexample}, {"verdict", c.verdict}, {"worst", c.worst},
                              {"sequences", s.num_sequences()}, {"tokens", s.num_tokens()}, {"H", s.H},
                              {"G", s.G}, {"P", s.P}, {"N", s.N}};
  write_result(result);
  std::printf("[planted] %s caught by %s after %lld cases: %s shrunk in %lld steps%s to sequences=%lld tokens=%lld "
              "H=%lld G=%lld P=%lld N=%lld; worst %s\n",
              bug.name.c_str(), failed_property.c_str(), (long long)cases, c.verdict.c_str(),
              (long long)failure->shrink_steps, failure->shrink_budget_ended ? " (budget ended shrinking)" : "",
              (long long)s.num_sequences(), (long long)s.num_tokens(), (long long)s.H, (long long)s.G, (long long)s.P,
              (long long)s.N, c.worst.c_str());

  EXPECT_EQ(c.verdict, "VIOLATION") << c.worst;
  EXPECT_EQ(c.planted_bug, bug.name);
  // The file re-judges to what it records, in this process and through this binary's ssmv.
  const verify::KernelCheck again = verify::check_counterexample(c, verify::Device::twin);
  EXPECT_EQ(std::string(verify::verdict_name(again.overall())), c.verdict);
  EXPECT_EQ(verify::worst_element_line(again), c.worst);
  const std::filesystem::path log_dir = std::filesystem::path(failure->counterexample).parent_path();
  EXPECT_EQ(cli::run_ssmv({"replay", failure->counterexample}), 1)
      << "ssmv-planted-" << bug.name << " replay did not reproduce the failure";
  // The bundled twin passes the same case.
  const std::string bundled = std::string("'") + SSMV_BINARY + "' replay '" + failure->counterexample + "'";
  EXPECT_EQ(run_shell(bundled, log_dir / "bundled_replay.log"), 0)
      << "the bundled twin fails the shrunk case too (" << (log_dir / "bundled_replay.log").string() << ")";
}

}  // namespace
}  // namespace ssmv::prop
