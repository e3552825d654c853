// What each reader makes of an input, as one line of text per reader: the fuzz regression
// test (tests/fuzz_regression_test.cpp) compares these lines for every committed input
// (corpus/ and regressions/) with expectations.txt, so any change in what the parsers
// accept, refuse or read fails CI naming the input and the reader.
//
// Readers (the same calls as fuzz_entry.cpp): "npy", "npz", "safetensors" (parse_tensor_bytes
// of that kind) and "json" (json::parse of the whole input). An outcome is
//   error: <the exception's what()>
// or, for a tensor file,
//   ok: <name> <dtype><shape> #<fnv-1a of the data>; ... | metadata {k=v, ...}
//       | options ok|error: ... | problem ...|error: ... | outputs ...|error: ...
// (the problem and outputs as problem_from_tensors / outputs_from_tensors map the tensors
// with default options), or for JSON "ok: <json::dump of the value>" (long dumps cut, with
// their length and hash). Bytes outside printable ASCII and the backslash are written \xNN
// and \\, so an outcome is one line whatever the input holds.
//
// expectations.txt holds "<folder>/<file>\t<reader>\t<outcome>" lines, sorted; it is
// written by `tensor_file_fuzz_replay --write-expectations verify/tensor_file/fuzz`
// (fuzz_replay.cpp) after a deliberate change of behaviour or new inputs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace ssmv::tensor_file {

struct ReaderOutcome {
  std::string reader;   // npy, npz, safetensors or json
  std::string outcome;  // one line, as above
};

std::vector<ReaderOutcome> fuzz_outcomes(const uint8_t* data, size_t size);

// The inputs the regression test replays: every regular file of <fuzz_dir>/corpus and
// <fuzz_dir>/regressions except README.md, as "<folder>/<file>", sorted.
std::vector<std::string> replayed_inputs(const std::filesystem::path& fuzz_dir);

// The expectation lines of those inputs ("<input>\t<reader>\t<outcome>"), in input order.
std::vector<std::string> expectation_lines(const std::filesystem::path& fuzz_dir);

// The file's bytes (TensorFileError-free: a read failure throws std::runtime_error).
std::vector<uint8_t> read_input(const std::filesystem::path& path);

inline constexpr const char* kExpectationsFile = "expectations.txt";

}  // namespace ssmv::tensor_file
