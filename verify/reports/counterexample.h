// Counterexample files: a self-contained record of one failing case that `ssmv replay`
// re-runs on the CPU (host twin) or the GPU. Written by the property suites (atomically),
// read by `ssmv replay`. Format: JSON, documented in docs/counterexample-format.md; every
// tensor value as its exact bit pattern in hex, so nothing is lost in printing.
#pragma once

#include <cstdint>
#include <string>

#include "spec/problem.h"

namespace ssmv::verify {

struct Counterexample {
  // What to run. kernel: "ssu" (decode), "chunk_scan" (prefill), "chunk_scan+ssu" (hand-off).
  std::string kernel;
  std::string contract;        // "ssu", "chunk_scan.production", "chunk_scan.fp32", ...
  int64_t chunk_size = 0;      // chunk_scan and hand-off
  int64_t split = 0;           // hand-off: tokens of each sequence prefilled by chunk_scan
  std::string device = "twin"; // where it failed: "twin" or "gpu"
  std::string planted_bug;     // a deliberately broken kernel variant, or empty
  // The inputs: `decode` for kernel "ssu", `problem` otherwise.
  Problem problem;
  DecodeProblem decode;
  // How it was found and what it showed.
  std::string property;        // the property that failed
  std::string reproduce;       // e.g. RC_PARAMS="reproduce=..." and the seed
  std::string verdict;         // "VIOLATION", "INVALID", ..., or "ERROR" (the case threw)
  std::string worst;           // the worst element, as printed in the failure message
};

// Writes to a temporary file in the same directory, then renames: a reader never sees a
// half-written file. Throws std::runtime_error naming the path on I/O errors.
void write_counterexample(const std::string& path, const Counterexample& c);

// Throws std::runtime_error naming the file and the field on malformed input.
Counterexample read_counterexample(const std::string& path);

}  // namespace ssmv::verify
