// A run's report: metadata, the KernelChecks of every case and optional side-by-side
// comparisons; written as JSON (schema: ../docs/report-schema.md) and Markdown (for people
// and CI comments), each atomically (temporary file + rename: never a partial file).
// Reports carry no date, so the same run gives the same bytes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "spec/problem.h"
#include "verify/json/json.h"
#include "verify/judge/check_result.h"
#include "verify/judge/side_by_side.h"

namespace ssmv::verify {

// One input value an element depends on, exactly (bit patterns in its format).
struct InputValue {
  std::string name;            // "x", "dt", "A", "dt_bias", "D", "z", "B", "C", "initial_state", "state_pool"
  std::vector<int64_t> index;  // its index in that problem tensor, e.g. x [t, h, p]; rows end before the last axis
  Format format = Format::fp32;
  std::vector<Bits> bits;      // one value, or a whole row (B[t, g, :], C[t, g, :])
};

// The inputs of element `index` of tensor `r` (a KernelCheck's tensor of `p`), chosen by
// the tensor's coordinates:
//   y (sequence, token, head, dim)         x, dt, A, dt_bias, D, z at (t, h, p); the B and C rows of token t
//   a state (sequence, head, dim, state)   the sequence's last token's x, dt, B[n]; A, dt_bias; initial_state
//   other layouts (chunk boundaries)       A and dt_bias of the head
std::vector<InputValue> element_inputs(const Problem& p, const TensorReport& r, int64_t index);
// As above for a decode problem: a state_pool element (slot, head, dim, state) is traced to
// the request that wrote the slot (its last token, and the slot it read), if any.
std::vector<InputValue> element_inputs(const DecodeProblem& d, const TensorReport& r, int64_t index);

struct ReportEntry {
  std::string name;     // the case, e.g. "chunk_scan prefill, bf16 state"
  std::string problem;  // one-line summary (problem_summary)
  KernelCheck check;
  // Parallel to check.tensors: the inputs of each tensor's worst element (empty when the
  // problem was not given).
  std::vector<std::vector<InputValue>> worst_inputs;
};

ReportEntry report_entry(std::string name, KernelCheck check, const Problem& p);
ReportEntry report_entry(std::string name, KernelCheck check, const DecodeProblem& d);
// Without the problem: no worst-element inputs.
ReportEntry report_entry(std::string name, std::string problem_summary, KernelCheck check);

struct Report {
  std::string ssmv_version;  // e.g. "0.1.0"
  std::string command;       // what produced it, e.g. "ssmv run"
  std::vector<ReportEntry> entries;
  std::vector<SideBySide> comparisons;
  // No VIOLATION or INVALID in any entry and no unexplained divergence.
  bool ok() const;
};

json::Value report_to_json(const Report& r);
std::string report_to_markdown(const Report& r);
// Atomic writes; std::runtime_error naming the path on failure (the destination is then
// left as it was).
void write_report_json(const std::string& path, const Report& r);
void write_report_markdown(const std::string& path, const Report& r);

}  // namespace ssmv::verify
