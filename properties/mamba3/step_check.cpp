#include "properties/mamba3/step_check.h"

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "properties/harness/feature_count.h"
#include "properties/harness/property.h"
#include "properties/mamba3/step_gen.h"
#include "verify/family/mamba3/mamba3_family.h"
#include "verify/reports/report_text.h"
#include "verify/tensor_file/dump_metadata.h"
#include "verify/tensor_file/tensor_file.h"

namespace ssmv::prop::mamba3 {

using ref::mamba3::CertifiedValues;

tensor_file::DumpOptions dump_options(const ssmv::mamba3::Problem& p, const std::string& kernel,
                                      const std::string& contract) {
  tensor_file::DumpOptions o;
  o.kernel = kernel;
  o.contract = contract;
  o.input_format = p.formats.input;
  o.state_format = p.formats.state;
  o.output_format = p.formats.output;
  return o;
}

std::optional<StepFailure> same_values(const std::string& what, const CertifiedValues& a, size_t from,
                                       const CertifiedValues& b, size_t to, size_t n) {
  const auto part = [&](const auto& va, const auto& vb) {
    return std::make_pair(std::vector(va.begin() + from, va.begin() + from + n),
                          std::vector(vb.begin() + to, vb.begin() + to + n));
  };
  if (a.size() < from + n || b.size() < to + n) {
    return StepFailure{"VIOLATION", what + ": too few elements", what + " differ in length", {}};
  }
  const std::string where = " [" + std::to_string(from) + ", +" + std::to_string(n) + ")";
  if (auto [x, y] = part(a.hi, b.hi); auto f = same_bits(what + " hi" + where, x, y)) return f;
  if (auto [x, y] = part(a.lo, b.lo); auto f = same_bits(what + " lo" + where, x, y)) return f;
  if (auto [x, y] = part(a.magnitude, b.magnitude); auto f = same_bits(what + " magnitude" + where, x, y)) return f;
  if (auto [x, y] = part(a.fp32, b.fp32); auto f = same_bits(what + " fp32" + where, x, y)) return f;
  if (auto [x, y] = part(a.bf16, b.bf16); auto f = same_bits(what + " bf16" + where, x, y)) return f;
  if (auto [x, y] = part(a.fp16, b.fp16); auto f = same_bits(what + " fp16" + where, x, y)) return f;
  return std::nullopt;
}

std::optional<StepFailure> same_values_whole(const std::string& what, const CertifiedValues& a,
                                             const CertifiedValues& b) {
  if (a.size() != b.size()) return StepFailure{"VIOLATION", what + ": sizes differ", what + " differ in length", {}};
  return same_values(what, a, 0, b, 0, a.size());
}

Outputs outputs_of(const bound::mamba3::EmulatedSteps& e) { return {e.y, {e.angle, e.S, e.B_prev, e.x_prev}}; }

verify::KernelCheck judge_step(const ssmv::mamba3::Problem& p, const Outputs& out, const std::string& contract) {
  const tensor_file::TensorMap m = family::mamba3::dump_tensors(p, out);
  family::DumpFiles files;
  files.problem_path = files.outputs_path = "<generated>";
  files.problem_tensors = files.output_tensors = &m;
  files.options = dump_options(p, family::mamba3::kStepKernel, contract);
  family::CheckOptions o;
  o.sharp = false;
  return family::mamba3::family().read(files)->check("<generated>", o).entry.check;
}

std::optional<StepFailure> expect_within(const ssmv::mamba3::Problem& p, const Outputs& out,
                                         const std::string& what) {
  const verify::KernelCheck k = judge_step(p, out);
  int64_t judged = 0;
  double usage = 0;
  for (const verify::TensorReport& r : k.tensors) {
    judged += r.elements;
    usage = std::max(usage, r.max_bound_usage);
  }
  if (judged == 0) return StepFailure{"INVALID", "no elements", "the check judged no element (a vacuous case)", out};
  count_bound_usage(usage, k.ok());
  if (k.ok()) return std::nullopt;
  return StepFailure{std::string(verify::verdict_name(k.overall())), verify::worst_element_line(k),
                     what + " left the contract " + k.contract, out};
}

std::string current_dump_path() {
  return std::filesystem::path(current_counterexample_path()).replace_extension(".npz").string();
}

void run_case_dumping(const ssmv::mamba3::Problem& p, const DumpSpec& spec,
                      const std::function<std::optional<StepFailure>()>& body) {
  std::optional<StepFailure> failure;
  try {
    failure = body();
  } catch (const std::exception& e) {
    failure = StepFailure{"INVALID", std::string("exception: ") + e.what(), std::string("exception: ") + e.what(), {}};
  }
  if (!failure) return;
  std::string where = current_dump_path();
  try {
    Outputs out = failure->dumped;
    if (out.y.empty()) out = spec.honest();
    const std::filesystem::path parent = std::filesystem::path(where).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent);
    std::map<std::string, std::string> metadata = tensor_file::metadata_from_dump_options(spec.options);
    metadata["ssmv.source"] = "property " + current_property();
    tensor_file::save_npz(where, family::mamba3::dump_tensors(p, out), metadata);
    where += " (re-judge it: ssmv check " + where + ")";
  } catch (const std::exception& e) {
    where = std::string("(not written: ") + e.what() + ")";
  }
  RC_FAIL(failure->message + "\n  verdict " + failure->verdict + "; worst: " + failure->worst + "\n  dump: " + where);
}

void run_step_case(const ssmv::mamba3::Problem& p, const std::function<std::optional<StepFailure>()>& body) {
  run_case_dumping(p,
                   {dump_options(p, family::mamba3::kStepKernel, kEmulationContract),
                    [&p] { return outputs_of(bound::mamba3::emulate_steps(p)); }},
                   body);
}

void emulation_within_contract(const bound::mamba3::EmulationOptions& options, const std::string& what) {
  const GeneratedStep g = *step_problem();
  label_case(g);
  run_step_case(g.problem, [&] {
    return expect_within(g.problem, outputs_of(bound::mamba3::emulate_steps(g.problem, options)), what);
  });
}

void run_with_usage(const char* suite, const char* name, int64_t cases, void (*fn)()) {
  const PropertyOutcome o = check_property(suite, name, cases, rc::detail::toProperty(fn));
  ASSERT_TRUE(o.passed) << o.message;
  std::printf("[property] %s.%s: largest bound usage %.3g over %lld judged cases; by bin:", suite, name,
              o.bound_usage.max, (long long)o.bound_usage.cases);
  for (const auto& [bin, count] : o.bound_usage.bins) std::printf(" <=%s: %lld", bin.c_str(), (long long)count);
  std::printf("\n");
}

PropertyOutcome expect_caught(const std::string& suite, const std::string& name, void (*fn)()) {
  const char* results = std::getenv("SSMV_PROP_RESULTS");
  const std::string saved = results ? results : "";
  unsetenv("SSMV_PROP_RESULTS");
  const PropertyOutcome o = check_property(suite, name, 300, rc::detail::toProperty(fn));
  if (results) setenv("SSMV_PROP_RESULTS", saved.c_str(), 1);
  EXPECT_FALSE(o.passed) << name << ": not caught in " << o.cases << " cases";
  if (o.passed) return o;
  std::printf("[planted] %s caught after %lld passing cases, %lld shrink steps%s; the shrunk case:\n%s\n",
              name.c_str(), (long long)o.cases, (long long)o.shrink_steps,
              o.shrink_budget_ended ? " (ended by the shrink budget)" : "", o.message.c_str());
  EXPECT_NE(o.message.find("verdict VIOLATION"), std::string::npos) << o.message;

  const std::string path = current_dump_path();
  std::map<std::string, std::string> metadata;
  const tensor_file::TensorMap m = tensor_file::load_tensor_file(path, &metadata);
  family::DumpFiles files;
  files.problem_path = files.outputs_path = path;
  files.problem_tensors = files.output_tensors = &m;
  files.options = tensor_file::dump_options_from_metadata(metadata, path, family::mamba3::family().kernels());
  family::CheckOptions c;
  c.sharp = false;
  const verify::KernelCheck k = family::mamba3::family().read(files)->check(path, c).entry.check;
  EXPECT_EQ(k.overall(), verify::Verdict::violation) << path;
  return o;
}

}  // namespace ssmv::prop::mamba3
