// The built-in default suite of `ssmv run`: Mamba2-realistic shapes with bf16 inputs,
// both bundled kernels, fp32 and bf16 state, both chunk_scan contracts and the
// prefill/decode hand-off. Sized to run in well under a minute on two CPU cores with the
// host twins (the certified reference dominates).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "verify/kernel_check.h"
#include "verify/report.h"
#include "verify/side_by_side.h"

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
