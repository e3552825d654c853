// Runs a bundled kernel (host twin or GPU) on a problem and judges every element of its
// outputs against the certified reference and the per-element bound of its contract.
// One place that wires reference → kernel → bound → verdicts; `ssmv run`, `ssmv replay`,
// the soundness tests and the property suites all call it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fast/chunk_scan/chunk_scan.h"
#include "fast/chunk_scan/contract.h"
#include "fast/common/device.h"
#include "fast/ssu/ssu.h"
#include "reference/reference.h"
#include "verify/bound/chunked_bound.h"
#include "spec/problem.h"
#include "verify/judge/check_result.h"
#include "verify/judge/exact_bounds.h"
#include "verify/judge/tensor_report.h"
#include "verify/reports/counterexample.h"

namespace ssmv::verify {

// Where the bundled kernels run (fast/common/device.h): twin | gpu, device_name(),
// gpu_available() (this build has the CUDA kernels and a CUDA device is present).
using ssmv::Device;
using ssmv::device_name;
using ssmv::gpu_available;

// Judges SSU-family results `got` of decode problem `d` (y and the pool after the launch)
// against `exact` under the ssu contract; `kernel` and `device` name what produced them
// (check_ssu below, or a deliberately broken variant in the property suites).
KernelCheck judge_ssu(const DecodeProblem& d, const ref::ExactDecodeResult& exact, const ssu::Result& got,
                      const std::string& kernel, const std::string& device);

// SSU on a decode problem: y and the state pool after the launch (slots not written must
// be unchanged: bound 0).
KernelCheck check_ssu(const DecodeProblem& d, Device device);

// Judges chunk_scan results `got` of prefill problem `p` (y, the final states and, when
// `got` holds them, the states after every chunk: `exact` then computed with
// ref::Options::state_positions at every chunk end) against `exact` under the chunk_scan
// contract of `kind` and chunk size L; `device` names what produced them.
KernelCheck judge_chunk_scan(const Problem& p, chunk_scan::ContractKind kind, int64_t chunk_size,
                             const ref::ExactResult& exact, const chunk_scan::Result& got,
                             const std::string& device);

// chunk_scan on a prefill problem: y and the final states (and, with boundary_states, the
// state after every chunk).
KernelCheck check_chunk_scan(const Problem& p, chunk_scan::ContractKind kind, int64_t chunk_size,
                             Device device, bool boundary_states = false);

// What the hand-off's kernels return (run_handoff): y [T, H, P] in the output format (each
// sequence's first `split` tokens from chunk_scan, the rest from SSU) and the final states
// [S, H, P, N] in the state format, after each sequence's last token.
struct HandoffOutputs {
  std::vector<Bits> y;
  std::vector<Bits> final_state;
};

// The kernels' half of check_handoff below, without the reference or the bound: what it
// judges, for callers that write the outputs elsewhere (bench/check/make_check_dumps). Split 0
// is SSU alone from the initial states (one launch, each request's tokens with the state kept
// in fp32); a split at every sequence's end, chunk_scan alone. Throws ProblemError for an
// invalid problem or a split outside a sequence, before anything runs.
HandoffOutputs run_handoff(const Problem& p, int64_t split, chunk_scan::ContractKind kind, int64_t chunk_size,
                           Device device);

// The disaggregated prefill/decode hand-off: chunk_scan over the first `split` tokens of
// every sequence, its final states (state format) handed to SSU through a state pool, SSU
// decoding the remaining tokens one launch per request. Judged against the exact [0, T):
// y of both parts, and the final states after decode, whose bound starts from the
// chunked bound of the handed-over state. 0 ≤ split ≤ the shortest sequence.
KernelCheck check_handoff(const Problem& p, int64_t split, chunk_scan::ContractKind kind,
                          int64_t chunk_size, Device device);

// The check a counterexample file records, re-run on `device`: kernel "ssu" (check_ssu),
// "chunk_scan" (check_chunk_scan with the chunk-boundary states, as the property suites
// judge them) or "chunk_scan+ssu" (check_handoff at its split), under its contract
// ("chunk_scan.production" / "chunk_scan.fp32", optionally "+ssu"). What `ssmv replay` and
// the planted-bug catalogue run. read_counterexample admits only these; a Counterexample
// built otherwise with another kernel or contract throws std::invalid_argument naming the
// field and value, before anything runs.
KernelCheck check_counterexample(const Counterexample& c, Device device);


}  // namespace ssmv::verify
