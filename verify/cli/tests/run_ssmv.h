// Runs the ssmv binary (SSMV_BINARY, set by CMake) with arguments through the shell, for
// the end-to-end CLI tests: its exit code and everything it printed (stdout and stderr).
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

namespace ssmv::cli::testing {

struct Outcome {
  int code = -1;
  std::string output;
};

// `ssmv ARGS`, run in the folder `dir` when one is given (relative paths name its files).
inline Outcome run_ssmv(const std::string& args, const std::string& dir = "") {
  Outcome o;
  const std::string cmd =
      (dir.empty() ? "" : "cd '" + dir + "' && ") + std::string(SSMV_BINARY) + " " + args + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return o;
  std::array<char, 4096> buf;
  while (fgets(buf.data(), int(buf.size()), pipe)) o.output += buf.data();
  const int status = pclose(pipe);
  o.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return o;
}

// A test with its own temporary folder dir_ (named after the test program and the pid),
// removed afterwards.
class TempDirTest : public ::testing::Test {
 protected:
  explicit TempDirTest(const std::string& prefix) : prefix_(prefix) {}
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / (prefix_ + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string prefix_;
  std::filesystem::path dir_;
};

}  // namespace ssmv::cli::testing
