// The built-in default suite of `ssmv run`: production-shaped problems (H = 8, P = 64,
// N = 128, G = 2; Mamba2-realistic data, bf16 inputs), both bundled kernels, fp32 and bf16
// state, both chunk_scan contracts (a 2,048-token prompt of three sequences) and the
// prefill/decode hand-off. On two CPU cores with the host twins it takes about 18 CPU-seconds
// (bench/NOTES.md, "Default suite"): the chunked bound, the twins and the certified
// reference a quarter to a third each.
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
