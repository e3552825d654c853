// The built-in default suite of `ssmv run`: production-shaped problems (H = 8, P = 64,
// N = 128, G = 2, bf16 inputs), every bundled kernel. The cases, in order:
//   ssu decode, 1 and 4 tokens/request, fp32 and bf16 state  8 requests (1 pad), 12 slots
//   chunk_scan prefill, chunk 256, production and fp32       a 2,048-token prompt, 3 sequences
//   hand-off: chunk_scan [0,200) then ssu [200,260), fp32 and bf16 state
//   mamba3 step decode, from a prefilled state               the Mamba-3 SISO step kernel (fast/mamba3/),
//                                                            4 sequences of 16, 10, 5, 1 tokens, R = 32
// then default_comparison below. Mamba2's cases on Mamba2-realistic data (spec/realistic_problem.h),
// judged by kernel_check.h; the Mamba-3 case on data drawn like mamba_ssm's test
// (spec/mamba3/random_problem.h: D, z, a four-part initial state, bf16 output), judged under the
// kernel's contract ssmv.mamba3_step by the Mamba-3 family as a dump of its outputs would be.
// On this 2-core box with the host twins (bench/NOTES.md, "Default suite" and "Mamba-3 step in
// `ssmv run`'s default suite"), medians of 5 under load 2–3: Mamba2's cases and the comparison
// about 18 CPU-seconds (the chunked bound, the twins and the certified reference a quarter to a
// third each), the Mamba-3 case about 4 more (its token-by-token certified reference most of
// it); 15 s wall in all.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "verify/run/kernel_check.h"
#include "verify/reports/report.h"
#include "verify/judge/side_by_side.h"

namespace ssmv::verify {

struct SuiteCase {
  std::string name;                                  // e.g. "ssu decode, bf16 state"
  std::string problem;                               // a one-line shape summary
  std::function<ReportEntry(Device)> run;  // the judged run, with the worst elements' inputs
};

std::vector<SuiteCase> default_suite();

// The suite's side-by-side comparison: the same prompt through chunk_scan (production
// contract, chunk 256) and through SSU decoding it token by token (the hand-off with split
// 0), each judged against the exact value, and their divergence explained by the sum of
// their bounds — or not.
SideBySide default_comparison(Device device);

}  // namespace ssmv::verify
