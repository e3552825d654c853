// The fuzzed function: every tensor-file parser on the same bytes, then everything a
// caller does with what parsed (accessors, problem and output mappings, the dump options of
// the metadata). Shared by the libFuzzer target (libfuzzer_main.cpp, built with clang's
// -fsanitize=fuzzer,address,undefined) and the g++ regression test that replays the seed
// corpus and the regression corpus (tests/fuzz_regression_test.cpp).
//
// Contract it checks: on any input the parsers either succeed or throw TensorFileError
// (json::ParseError for the JSON parser); any other exception, a crash, an out-of-bounds
// access or undefined behaviour is a finding. What parsed must survive a write and re-read
// unchanged (std::abort otherwise, which libFuzzer reports).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ssmv::tensor_file {

// The kernel names ssmv.kernel may take while fuzzing: Mamba2's, the names expectations.txt
// was written with (the registered list, verify/family/registry.h, sits above this library;
// the metadata reader takes any list).
inline const std::vector<std::string> kFuzzKernels = {"ssu", "chunk_scan", "handoff"};

void fuzz_tensor_parsers(const uint8_t* data, size_t size);

}  // namespace ssmv::tensor_file
