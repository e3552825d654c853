// What a property body does when its case fails: write the case as a counterexample file
// (verify/reports/counterexample.h; atomically, to current_counterexample_path()) and fail the
// rapidcheck case with a message that names the file. Every failing attempt while rapidcheck
// shrinks overwrites the file, so when shrinking ends it holds the minimal case; the property
// harness then adds rapidcheck's reproduce string to it.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "verify/reports/counterexample.h"
#include "verify/run/kernel_check.h"

namespace ssmv::prop {

struct CaseFailure {
  std::string verdict;  // "VIOLATION" (also: a relation's bound exceeded, bits differ), "INVALID"
                        // (also: an exception, its message in `worst`)
  std::string worst;    // the worst element, one line
  std::string message;  // what failed
};

// Runs `body` on the case described by `cex` (inputs, kernel, contract already set); when it
// returns a failure or throws std::exception, fills cex.property/verdict/worst, writes the
// file and fails the rapidcheck case (RC_FAIL). A thrown exception is a failure too: a bound
// that refuses the generated data is a generator bug, not a pass.
void run_case(verify::Counterexample cex, const std::function<std::optional<CaseFailure>()>& body);

// run_case for a KernelCheck: fails unless every element is EXACT or WITHIN_CONTRACT.
void expect_within_contract(verify::Counterexample cex, const std::function<verify::KernelCheck()>& check);

// The counterexample skeletons of the three bundled kernel runs (inputs, kernel, contract).
verify::Counterexample decode_case(const DecodeProblem& d, verify::Device device);
verify::Counterexample prefill_case(const Problem& p, chunk_scan::ContractKind kind, int64_t chunk_size,
                                    verify::Device device);
verify::Counterexample handoff_case(const Problem& p, int64_t split, chunk_scan::ContractKind kind,
                                    int64_t chunk_size, verify::Device device);

}  // namespace ssmv::prop
