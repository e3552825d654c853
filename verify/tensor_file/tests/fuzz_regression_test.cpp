// Replays every committed fuzz input — the seed corpus (fuzz/corpus/) and the regression
// corpus (fuzz/regressions/: inputs of past fuzzing runs that reached new edges, and every
// input the fuzzer ever crashed on) — built with g++:
//   * through the fuzzed function: a crash, an escaping exception or a failed round trip
//     fails the test;
//   * through each reader, comparing its exact outcome (the error message, or what was
//     read) with fuzz/expectations.txt (fuzz/fuzz_outcome.h), so any change of behaviour
//     fails naming the input and the reader. After a deliberate change, regenerate it with
//     tensor_file_fuzz_replay --write-expectations (fuzz/fuzz_replay.cpp) and review the diff.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "verify/tensor_file/fuzz/fuzz_entry.h"
#include "verify/tensor_file/fuzz/fuzz_outcome.h"
#include "verify/tensor_file/problem_file.h"
#include "verify/tensor_file/tensor_file.h"

namespace ssmv::tensor_file {
namespace {

const std::filesystem::path kFuzzDir = SSMV_FUZZ_DIR;

size_t count_in(const std::vector<std::string>& inputs, const std::string& folder) {
  size_t n = 0;
  for (const std::string& s : inputs) n += s.starts_with(folder + "/");
  return n;
}

TEST(TensorFileFuzzRegression, EveryInputParsesOrIsRefusedAndRoundTrips) {
  const std::vector<std::string> inputs = replayed_inputs(kFuzzDir);
  EXPECT_GE(count_in(inputs, "corpus"), 10u);  // the seeds of fuzz/make_seeds.py
  EXPECT_GE(count_in(inputs, "regressions"), 100u);  // the merged corpus of the fuzzing runs
  for (const std::string& input : inputs) {
    const std::vector<uint8_t> bytes = read_input(kFuzzDir / input);
    SCOPED_TRACE(input);
    EXPECT_NO_THROW(fuzz_tensor_parsers(bytes.data(), bytes.size()));
  }
}

// (input, reader) -> outcome, from lines "<input>\t<reader>\t<outcome>".
std::map<std::pair<std::string, std::string>, std::string> by_input_and_reader(const std::vector<std::string>& lines) {
  std::map<std::pair<std::string, std::string>, std::string> out;
  for (const std::string& line : lines) {
    const size_t a = line.find('\t'), b = a == std::string::npos ? a : line.find('\t', a + 1);
    if (b == std::string::npos) {
      ADD_FAILURE() << "malformed expectation line: " << line;
      continue;
    }
    out[{line.substr(0, a), line.substr(a + 1, b - a - 1)}] = line.substr(b + 1);
  }
  return out;
}

TEST(TensorFileFuzzRegression, EveryInputHasItsExpectedOutcome) {
  std::ifstream in(kFuzzDir / kExpectationsFile);
  ASSERT_TRUE(in) << "cannot read " << (kFuzzDir / kExpectationsFile);
  std::vector<std::string> committed;
  for (std::string line; std::getline(in, line);) committed.push_back(line);
  const auto expected = by_input_and_reader(committed);
  const auto actual = by_input_and_reader(expectation_lines(kFuzzDir));
  for (const auto& [key, outcome] : actual) {
    const auto it = expected.find(key);
    if (it == expected.end()) {
      ADD_FAILURE() << key.first << " (" << key.second << "): no expectation; outcome " << outcome;
    } else {
      EXPECT_EQ(outcome, it->second) << key.first << " (" << key.second << ")";
    }
  }
  for (const auto& [key, outcome] : expected) {
    EXPECT_TRUE(actual.count(key)) << key.first << " (" << key.second << "): expected but not replayed";
  }
  EXPECT_EQ(expected.size(), committed.size()) << "duplicate (input, reader) lines in " << kExpectationsFile;
}

// The seeds meant to reach the problem mapping do reach it (a seed refused early would
// leave the deep paths to chance).
TEST(TensorFileFuzzRegression, ProblemSeedsHoldValidProblemsAndOutputs) {
  for (const char* seed : {"problem.npz", "problem.safetensors", "varlen.safetensors"}) {
    const std::string path = std::string(SSMV_FUZZ_DIR "/corpus/") + seed;
    const Problem p = load_problem_file(path, ProblemFileOptions{});
    EXPECT_GE(p.shape.num_tokens(), 2) << seed;
    if (std::string(seed) != "problem.safetensors") {
      EXPECT_FALSE(load_outputs_file(path, p).y.empty()) << seed;
    }
  }
  const TensorMap z = load_tensor_file(SSMV_FUZZ_DIR "/corpus/zip64.npz");
  EXPECT_EQ(to_double(z.at("a")), (std::vector<double>{1.5, -2}));
}

}  // namespace
}  // namespace ssmv::tensor_file
