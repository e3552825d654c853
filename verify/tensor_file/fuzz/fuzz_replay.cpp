// tensor_file_fuzz_replay [--write-expectations] FUZZ_DIR
// Prints what the readers make of every committed fuzz input (fuzz_outcome.h), one
// "<input>\t<reader>\t<outcome>" line each; with --write-expectations writes those lines to
// FUZZ_DIR/expectations.txt instead, which tensor_file_fuzz_regression_test compares with.
// Run from the repository root after adding inputs or changing a parser's behaviour on
// purpose, and review the diff of expectations.txt:
//   build/release/verify/tensor_file/fuzz/tensor_file_fuzz_replay --write-expectations verify/tensor_file/fuzz
#include <cstdio>
#include <exception>
#include <fstream>
#include <stdexcept>
#include <string>

#include "verify/tensor_file/fuzz/fuzz_outcome.h"

int main(int argc, char** argv) {
  const bool write = argc == 3 && std::string(argv[1]) == "--write-expectations";
  if (!(argc == 2 || write) || std::string(argv[argc - 1]).starts_with("-")) {
    std::fprintf(stderr, "usage: %s [--write-expectations] FUZZ_DIR\n", argv[0]);
    return 2;
  }
  const std::filesystem::path dir = argv[argc - 1];
  try {
    const std::vector<std::string> lines = ssmv::tensor_file::expectation_lines(dir);
    if (!write) {
      for (const std::string& line : lines) std::printf("%s\n", line.c_str());
      return 0;
    }
    const std::filesystem::path out = dir / ssmv::tensor_file::kExpectationsFile;
    std::ofstream f(out, std::ios::binary | std::ios::trunc);
    for (const std::string& line : lines) f << line << '\n';
    f.close();
    if (!f) throw std::runtime_error("cannot write " + out.string());
    std::fprintf(stderr, "wrote %zu lines to %s\n", lines.size(), out.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tensor_file_fuzz_replay: %s\n", e.what());
    return 1;
  }
  return 0;
}
