// What the Mamba-3 property suites judge with and how a failing case is recorded.
//
// Judging goes the way `ssmv check` goes: the problem and the outputs become a dump's tensors
// (verify/family/mamba3/dump_reading.h, dump_tensors), the Mamba-3 family reads them and checks
// every element of y and of the final four-part state (the angle on the circle) against the
// certified reference run token by token and the step bound (verify/family/mamba3/), with the
// verdicts of verify/judge. A failing case is written as that dump, with its metadata, to
// $SSMV_CEX_DIR/<Suite>.<Name>.npz (rewritten by every failing attempt while rapidcheck shrinks,
// so the minimal case remains): `ssmv check FILE` re-judges it. (The counterexample JSON of
// verify/reports/counterexample.h holds Mamba2 problems only; the harness then says that no
// counterexample file was written, and the failure message names the dump instead.)
#pragma once

#include <cstring>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "properties/harness/property.h"
#include "reference/mamba3/certified_values.h"
#include "spec/mamba3/problem.h"
#include "verify/bound/mamba3/step_emulation.h"
#include "verify/family/mamba3/dump_reading.h"
#include "verify/run/kernel_check.h"
#include "verify/tensor_file/dump_metadata.h"

namespace ssmv::prop::mamba3 {

using family::mamba3::Outputs;

inline constexpr const char* kEmulationContract = "mamba3_siso_step.host_emulation";

// Every output of an emulation run.
Outputs outputs_of(const bound::mamba3::EmulatedSteps& e);

// `ssmv check`'s judgement of `out` as the step kernel's outputs on `p` under `contract` (the
// sharp verdict off: the family has none). Throws as the check does.
verify::KernelCheck judge_step(const ssmv::mamba3::Problem& p, const Outputs& out,
                               const std::string& contract = kEmulationContract);

struct StepFailure {
  std::string verdict;  // VIOLATION, INVALID (also: an exception), or what a relation reports
  std::string worst;    // the worst element, one line
  std::string message;  // what failed
  Outputs dumped;       // the outputs the dump records; empty y: the honest emulation's
};

// judge_step, counted in the bound-usage statistics; a failure unless every element is EXACT or
// WITHIN_CONTRACT.
std::optional<StepFailure> expect_within(const ssmv::mamba3::Problem& p, const Outputs& out,
                                         const std::string& what);
// One case of "the emulation under `options` is within its contract": a problem drawn by
// step_problem() (step_gen.h), labelled, emulated and judged (run_step_case, expect_within).
void emulation_within_contract(const bound::mamba3::EmulationOptions& options, const std::string& what);

// The first element whose bit patterns differ (floats, doubles or encodings; +0 and −0 differ),
// or different lengths, as a failure named `what`.
template <typename T>
std::optional<StepFailure> same_bits(const std::string& what, const std::vector<T>& a, const std::vector<T>& b) {
  std::ostringstream os;
  if (a.size() != b.size()) {
    os << what << ": " << a.size() << " vs " << b.size() << " elements";
    return StepFailure{"VIOLATION", os.str(), what + " differ in length", {}};
  }
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::memcmp(&a[i], &b[i], sizeof(T)) != 0) {
      os << what << "[" << i << "]: " << std::hexfloat << a[i] << " vs " << b[i];
      return StepFailure{"VIOLATION", os.str(), what + " differ (0 ULPs allowed)", {}};
    }
  }
  return std::nullopt;
}

// Elements [from, from + n) of `a` against [to, to + n) of `b`, every field (hi, lo, magnitude and
// the roundings to fp32, bf16, fp16), bit for bit; same_values_whole: all of both, same length.
std::optional<StepFailure> same_values(const std::string& what, const ref::mamba3::CertifiedValues& a, size_t from,
                                       const ref::mamba3::CertifiedValues& b, size_t to, size_t n);
std::optional<StepFailure> same_values_whole(const std::string& what, const ref::mamba3::CertifiedValues& a,
                                             const ref::mamba3::CertifiedValues& b);

// A dump's options for `p`: the kernel (mamba3_step, mamba3_prefill, mamba3_handoff), its
// contract preset and the formats (the caller adds chunk_size, prefill_tokens, decode_contract).
tensor_file::DumpOptions dump_options(const ssmv::mamba3::Problem& p, const std::string& kernel,
                                      const std::string& contract);

// What run_case_dumping writes when a case fails: the dump's options, and the outputs to record
// when the failure carries none (StepFailure::dumped empty).
struct DumpSpec {
  tensor_file::DumpOptions options;
  std::function<Outputs()> honest;
};

// Every part of two emulation runs (EmulatedSteps) or two bounds (StepBounds), bit for bit.
template <typename Parts>
std::optional<StepFailure> same_parts(const std::string& what, const Parts& a, const Parts& b) {
  if (auto f = same_bits(what + " y", a.y, b.y)) return f;
  if (auto f = same_bits(what + " angle", a.angle, b.angle)) return f;
  if (auto f = same_bits(what + " S", a.S, b.S)) return f;
  if (auto f = same_bits(what + " B_prev", a.B_prev, b.B_prev)) return f;
  return same_bits(what + " x_prev", a.x_prev, b.x_prev);
}

// Runs `body` on the case `p`; on a failure or an exception writes `p` and the outputs as a dump
// under `spec` (see the top) and fails the rapidcheck case with the verdict, the worst element and
// `ssmv check FILE`.
void run_case_dumping(const ssmv::mamba3::Problem& p, const DumpSpec& spec,
                      const std::function<std::optional<StepFailure>()>& body);
// run_case_dumping as the step kernel under kEmulationContract, the honest emulation's outputs.
void run_step_case(const ssmv::mamba3::Problem& p, const std::function<std::optional<StepFailure>()>& body);

// Runs the property `fn` as suite.name with `cases` base cases (it must pass) and prints the
// distribution of its cases' largest bound usage (error ÷ bound) by bin.
void run_with_usage(const char* suite, const char* name, int64_t cases, void (*fn)());

// A planted bug's property `fn` run under `suite`.`name` (at most 300 cases), expected to fail with
// a VIOLATION: prints the shrunk case and re-judges the dump from its file through the Mamba-3
// family's check, as `ssmv check FILE` reads it (a VIOLATION again). No result file: the failure is
// expected. Returns the outcome.
PropertyOutcome expect_caught(const std::string& suite, const std::string& name, void (*fn)());

// Where run_step_case writes the current property's dump.
std::string current_dump_path();

}  // namespace ssmv::prop::mamba3
