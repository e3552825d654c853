// The family seam (docs/design.md, "Families"): a recurrence family (Mamba2, Mamba-3 SISO)
// registers the kernels it owns and how it reads and checks one of their dumps; `ssmv check`
// finds the family by the dump's kernel name (verify/family/registry.h) and prints what the
// family returns. What a family returns is family-agnostic: verdicts, tensor reports and
// their files (verify/judge/, verify/reports/). What a family brings: its problem, exact
// reference, bounds and contracts, in its own folders. A family other than Mamba2 also lists its
// contract presets (`ssmv contract list`) and computes its rows of `ssmv bounds`
// (verify/bounds_report/ summarises and writes them).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "spec/problem.h"  // Formats
#include "verify/judge/side_by_side.h"  // ElementMap
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
  // The file whose tensors describe the kernel's launch (a hand-off's prefill_tokens): the
  // problem file for `ssmv check`; each side's own file for `ssmv compare`, whose problem file
  // is often the other side's. nullptr: the problem file.
  std::string launch_path;
  const tensor_file::TensorMap* launch_tensors = nullptr;
  std::string flag_prefix;  // names the flags in messages: "" for check, "a-" / "b-" for compare's sides

  const tensor_file::TensorMap& launch() const { return launch_tensors ? *launch_tensors : *problem_tensors; }
  const std::string& launch_file() const { return launch_tensors ? launch_path : problem_path; }
};

// How to judge: the sharp verdict (docs/sharp-verdicts.md) and a stochastic store's bias test.
struct CheckOptions {
  bool sharp = true;
  sharp::SharpOptions sharp_options;
  double false_alarm = 1e-6;  // the bias test's false-alarm probability
  // Keep every tensor's per-element vectors (the kernel's bits, the exact values, the bounds,
  // the scales: ElementDetail::elements) and return the tensors' element maps: what
  // `ssmv compare` sets side by side. Off: the report keeps summaries only.
  bool keep_elements = false;
};

struct CheckedDump {
  verify::ReportEntry entry;               // verdicts, the problem's summary, the worst elements' inputs
  std::vector<verify::TensorBias> biases;  // one per stochastically rounded tensor (usually none)
  // With keep_elements: parallel to entry.check.tensors, each tensor's layout and period. The
  // layouts may read the Dump, which must outlive them.
  std::vector<verify::ElementMap> element_maps;
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
  // The first difference between this dump's inputs and `other`'s, "" when both hold the same
  // problem (`ssmv compare` refuses two dumps of different problems). `other` is of the same
  // family.
  virtual std::string problem_difference(const Dump& other) const = 0;
};

// A contract preset of a family, by name (`ssmv contract list` / `show`, `--contract`).
struct ContractPreset {
  std::string name;
  std::string family;       // the contract's kind as its file names it ("mamba3_step", "mamba3_prefill")
  std::string description;  // one line: the kernel, what it declares, where its budgets come from
  std::string show;         // what `ssmv contract show NAME` prints (e.g. the contract file's JSON)
};

// One problem of `ssmv bounds`' grid (verify/bounds_report/grid.h) for a family's presets: one
// sequence of T tokens, H heads in G groups, head dim P, state dim N; the family draws its data.
struct BoundsProblem {
  int64_t T = 0, N = 0, H = 0, P = 0, G = 0;
  std::vector<int64_t> chunk_sizes;  // a chunked kernel's rows run at each
  std::vector<Format> outputs;       // the output formats: a row each
  uint64_t seed = 0;
};

// One tensor of a bounds row, element by element in the tensor's layout.
struct BoundsTensor {
  std::string name;
  Format format{};
  std::vector<double> bound;  // the rigorous bound
  std::vector<double> exact;  // the certified exact value (its nearest double)
  std::vector<double> scale;  // its magnitude: the recurrence on absolute values
  // The measured evaluation's error ÷ bound (verify/judge/verdict.h judge's bound_usage), and
  // its elements over the bound (VIOLATION or INVALID); usage empty: nothing measured.
  std::vector<double> usage;
  int64_t over_bound = 0;
};

struct BoundsRow {
  std::string contract, kernel;
  int64_t chunk_size = 0;  // 0: not chunked
  Formats formats;
  std::string measured;  // what the usage measures ("the host emulation"); empty: nothing
  std::string note;      // why nothing is measured
  std::vector<BoundsTensor> tensors;
  double bound_seconds = 0, measured_seconds = 0;  // summed over the worker threads
};

struct BoundsRows {
  std::vector<BoundsRow> rows;
  double reference_seconds = 0;  // the certified reference's time, summed over the worker threads
  std::string problems;          // what the problems are (their data, formats, initial state): for the page
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
  // Its contract presets, after Mamba2's in `ssmv contract list` (Mamba2's own list is
  // verify/contracts/contract_json.h's: none here).
  virtual std::vector<ContractPreset> contract_presets() const { return {}; }
  // `ssmv bounds` rows of `contracts` (names of its contract_presets()) on one problem: per
  // contract, per chunk size when chunked, per output format. Threads: ref::default_threads().
  // Throws std::invalid_argument for a contract that cannot bound the problem.
  virtual BoundsRows bounds_rows(const std::vector<std::string>& contracts, const BoundsProblem& problem) const {
    (void)contracts;
    (void)problem;
    return {};
  }
};

}  // namespace ssmv::family
