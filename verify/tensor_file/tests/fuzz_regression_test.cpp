// Replays the fuzzer's seed corpus and every input the fuzzer ever crashed on
// (fuzz/regressions/, each named after the bug it found) through the fuzzed function,
// built with g++: a crash, an escaping exception or a failed round trip fails the test.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "verify/tensor_file/fuzz/fuzz_entry.h"
#include "verify/tensor_file/problem_file.h"
#include "verify/tensor_file/tensor_file.h"

namespace ssmv::tensor_file {
namespace {

size_t replay_folder(const std::filesystem::path& dir) {
  size_t n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (!entry.is_regular_file() || entry.path().filename() == "README.md") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    SCOPED_TRACE(entry.path().string());
    EXPECT_NO_THROW(fuzz_tensor_parsers(bytes.data(), bytes.size()));
    ++n;
  }
  return n;
}

TEST(TensorFileFuzzRegression, SeedCorpusParsesAndRoundTrips) {
  EXPECT_GE(replay_folder(SSMV_FUZZ_DIR "/corpus"), 10u);  // the seeds of fuzz/make_seeds.py
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

TEST(TensorFileFuzzRegression, EveryFormerCrashInputIsHandled) {
  replay_folder(SSMV_FUZZ_DIR "/regressions");
}

}  // namespace
}  // namespace ssmv::tensor_file
