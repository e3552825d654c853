// The family seam (docs/design.md, "Families"): a recurrence family (Mamba2, Mamba-3 SISO)
// registers the kernels it owns and how it reads and checks one of their dumps; `ssmv check`
// finds the family by the dump's kernel name (verify/family/registry.h) and prints what the
// family returns. What a family returns is family-agnostic: verdicts, tensor reports and
// their files (verify/judge/, verify/reports/). What a family brings: its problem, exact
// reference, bounds and contracts, in its own folders.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "verify/judge/stochastic_bias.h"
#include "verify/reports/report.h"
#include "verify/sharp/sharp_verdict.h"
#include "verify/tensor_file/dump_metadata.h"
#include "verify/tensor_file/tensor.h"

namespace ssmv::family {

// One dump as `ssmv check` read it: the problem file's and the outputs file's tensors (the
// same map when the outputs are in the problem file) and the options merged from the
// command line and both files' metadata (verify/cli/dump_options.h).
struct DumpFiles {
  std::string problem_path;
  const tensor_file::TensorMap* problem_tensors = nullptr;
  std::string outputs_path;
  const tensor_file::TensorMap* output_tensors = nullptr;
  tensor_file::DumpOptions options;
};

// How to judge: the sharp verdict (docs/sharp-verdicts.md) and a stochastic store's bias test.
struct CheckOptions {
  bool sharp = true;
  sharp::SharpOptions sharp_options;
  double false_alarm = 1e-6;  // the bias test's false-alarm probability
};

struct CheckedDump {
  verify::ReportEntry entry;               // verdicts, the problem's summary, the worst elements' inputs
  std::vector<verify::TensorBias> biases;  // one per stochastically rounded tensor (usually none)
};

// A dump its family has read and validated: the problem, the kernel's description, the outputs.
class Dump {
 public:
  virtual ~Dump() = default;
  // Every element judged; `name` names the report's entry (the dump's path).
  virtual CheckedDump check(const std::string& name, const CheckOptions& options) const = 0;
  // Guesses at a likely mistake in describing the dump, shown beside a failing verdict
  // (verify/family/hints.h); empty when none.
  virtual std::vector<std::string> failure_hints() const = 0;
  // A guess shown beside an error of the check (e.g. an input outside a transcendental's
  // budgeted range); "" when none.
  virtual std::string error_hint() const = 0;
};

class Family {
 public:
  virtual ~Family() = default;
  virtual std::string name() const = 0;                  // "mamba2"
  virtual std::vector<std::string> kernels() const = 0;  // the kernel names it owns ("ssu", ...)
  // What each of its kernels is, for `ssmv check --help`'s --kernel ("ssu: a decode kernel ...").
  virtual std::string kernel_help() const = 0;
  // Reads the problem, the kernel and its outputs. Throws ProblemError, tensor_file's
  // TensorFileError or cli::UsageError naming the tensor, option or metadata key and value.
  virtual std::unique_ptr<Dump> read(const DumpFiles& files) const = 0;
};

}  // namespace ssmv::family
