// Replays the fuzzer's seed corpus and every input the fuzzer ever crashed on
// (fuzz/regressions/, each named after the bug it found) through the fuzzed function,
// built with g++: a crash, an escaping exception or a failed round trip fails the test.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "verify/tensor_file/fuzz/fuzz_entry.h"

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
  EXPECT_GE(replay_folder(SSMV_FUZZ_DIR "/corpus"), 8u);  // the seeds of fuzz/make_seeds.py
}

TEST(TensorFileFuzzRegression, EveryFormerCrashInputIsHandled) {
  replay_folder(SSMV_FUZZ_DIR "/regressions");
}

}  // namespace
}  // namespace ssmv::tensor_file
