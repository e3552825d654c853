#include "properties/mamba3/step_check.h"

#include <rapidcheck.h>

#include <algorithm>
#include <filesystem>

#include "properties/harness/feature_count.h"
#include "properties/harness/property.h"
#include "properties/mamba3/step_gen.h"
#include "verify/family/mamba3/mamba3_family.h"
#include "verify/reports/report_text.h"
#include "verify/tensor_file/dump_metadata.h"
#include "verify/tensor_file/tensor_file.h"

namespace ssmv::prop::mamba3 {
namespace {

tensor_file::DumpOptions dump_options(const ssmv::mamba3::Problem& p, const std::string& contract) {
  tensor_file::DumpOptions o;
  o.kernel = "mamba3_step";
  o.contract = contract;
  o.input_format = p.formats.input;
  o.state_format = p.formats.state;
  o.output_format = p.formats.output;
  return o;
}

}  // namespace

Outputs outputs_of(const bound::mamba3::EmulatedSteps& e) { return {e.y, {e.angle, e.S, e.B_prev, e.x_prev}}; }

verify::KernelCheck judge_step(const ssmv::mamba3::Problem& p, const Outputs& out, const std::string& contract) {
  const tensor_file::TensorMap m = family::mamba3::dump_tensors(p, out);
  family::DumpFiles files;
  files.problem_path = files.outputs_path = "<generated>";
  files.problem_tensors = files.output_tensors = &m;
  files.options = dump_options(p, contract);
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

void run_step_case(const ssmv::mamba3::Problem& p, const std::function<std::optional<StepFailure>()>& body) {
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
    if (out.y.empty()) out = outputs_of(bound::mamba3::emulate_steps(p));
    const std::filesystem::path parent = std::filesystem::path(where).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent);
    std::map<std::string, std::string> metadata = tensor_file::metadata_from_dump_options(dump_options(p, kEmulationContract));
    metadata["ssmv.source"] = "property " + current_property();
    tensor_file::save_npz(where, family::mamba3::dump_tensors(p, out), metadata);
    where += " (re-judge it: ssmv check " + where + ")";
  } catch (const std::exception& e) {
    where = std::string("(not written: ") + e.what() + ")";
  }
  RC_FAIL(failure->message + "\n  verdict " + failure->verdict + "; worst: " + failure->worst + "\n  dump: " + where);
}

void emulation_within_contract(const bound::mamba3::EmulationOptions& options, const std::string& what) {
  const GeneratedStep g = *step_problem();
  label_case(g);
  run_step_case(g.problem, [&] {
    return expect_within(g.problem, outputs_of(bound::mamba3::emulate_steps(g.problem, options)), what);
  });
}

}  // namespace ssmv::prop::mamba3
