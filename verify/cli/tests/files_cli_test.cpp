// No ssmv command overwrites a file it reads, or writes two outputs onto one file: an output
// path that names an input (by the same path, ./a for a, a symbolic or a hard link) or another
// output is refused with exit code 2 before any work, the message naming both flags, and
// every file is left byte for byte as it was. A report path that cannot be written is
// refused before the work starts (`ssmv run` used to learn it after the whole suite).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "spec/realistic_problem.h"
#include "verify/cli/tests/run_ssmv.h"
#include "verify/reports/counterexample.h"

namespace ssmv::cli {
namespace {

namespace fs = std::filesystem;
using testing::Outcome;
using testing::run_ssmv;

std::string bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class FilesCli : public testing::TempDirTest {
 protected:
  FilesCli() : TempDirTest("ssmv_files_cli_") {}
  void SetUp() override {
    TempDirTest::SetUp();
    dump_ = dir_ / "D.npz";
    fs::copy_file(fs::path(SSMV_TRITON_FIXTURES) / "ssu_bf16in_fp32state_z_D_T4.npz", dump_);
    dump_bytes_ = bytes(dump_);
  }
  // Runs ssmv in the test's folder (so that relative paths name its files).
  Outcome run_here(const std::string& args) const {
    return run_ssmv(args, dir_.string());
  }
  // ssmv ARGS (in the test folder) is refused with exit 2 naming both flags; the dump is intact.
  void expect_refused(const std::string& args, const std::string& out_flag, const std::string& in_flag) {
    const Outcome o = run_here(args);
    EXPECT_EQ(o.code, 2) << args << "\n" << o.output;
    EXPECT_NE(o.output.find("'" + out_flag + " "), std::string::npos) << args << "\n" << o.output;
    EXPECT_NE(o.output.find("'" + in_flag + " "), std::string::npos) << args << "\n" << o.output;
    EXPECT_EQ(bytes(dump_), dump_bytes_) << args << ": the dump changed";
  }
  fs::path dump_;
  std::string dump_bytes_;
};

TEST_F(FilesCli, CheckRefusesEveryOutputOntoAnInput) {
  expect_refused("check D.npz --json D.npz", "--json", "FILE");
  expect_refused("check D.npz --markdown ./D.npz", "--markdown", "FILE");
  expect_refused("check --problem D.npz --json " + dump_.string(), "--json", "--problem");
  expect_refused("check D.npz --outputs D.npz --markdown D.npz", "--markdown", "--outputs");
  fs::copy_file(dump_, dir_ / "O.npz");
  expect_refused("check D.npz --outputs O.npz --json O.npz", "--json", "--outputs");
  fs::create_symlink(dir_ / "D.npz", dir_ / "link.npz");
  expect_refused("check D.npz --json link.npz", "--json", "FILE");
  fs::create_hard_link(dir_ / "D.npz", dir_ / "hard.npz");
  expect_refused("check hard.npz --markdown D.npz", "--markdown", "FILE");
  std::ofstream(dir_ / "mine.json") << "{}";
  const std::string contract = bytes(dir_ / "mine.json");
  expect_refused("check D.npz --contract mine.json --markdown mine.json", "--markdown", "--contract");
  EXPECT_EQ(bytes(dir_ / "mine.json"), contract);
}

TEST_F(FilesCli, TwoOutputsOntoOneFileAreRefused) {
  expect_refused("check D.npz --json r.txt --markdown ./r.txt", "--json", "--markdown");
  expect_refused("bounds --quick --out-md b.txt --out-json b.txt", "--out-md", "--out-json");
  expect_refused("run --json r --markdown r", "--json", "--markdown");
  EXPECT_FALSE(fs::exists(dir_ / "r.txt"));
  EXPECT_FALSE(fs::exists(dir_ / "b.txt"));
}

TEST_F(FilesCli, CompareAndReplayRefuseOutputsOntoInputs) {
  fs::copy_file(dump_, dir_ / "B.npz");
  const std::string b_bytes = bytes(dir_ / "B.npz");
  expect_refused("compare --a D.npz --b B.npz --json B.npz", "--json", "--b");
  expect_refused("compare --a D.npz --b B.npz --markdown D.npz", "--markdown", "--a");
  EXPECT_EQ(bytes(dir_ / "B.npz"), b_bytes);

  verify::Counterexample c;
  c.kernel = "chunk_scan";
  c.contract = "chunk_scan.production";
  c.chunk_size = 64;
  c.problem = realistic_problem(Shape{{0, 20}, 1, 2, 8, 1}, Formats{}, 5);
  c.property = "files_cli_test";
  c.verdict = "WITHIN_CONTRACT";
  verify::write_counterexample((dir_ / "cex.json").string(), c);
  const std::string cex = bytes(dir_ / "cex.json");
  expect_refused("replay cex.json --json cex.json", "--json", "FILE");
  EXPECT_EQ(bytes(dir_ / "cex.json"), cex);
}

TEST_F(FilesCli, AnUnwritableReportIsRefusedBeforeTheWork) {
  const Outcome o = run_here("run --device twin --json /nonexistent/r.json");
  EXPECT_EQ(o.code, 2) << o.output;
  EXPECT_NE(o.output.find("option '--json' = '/nonexistent/r.json': folder '/nonexistent' does not exist"),
            std::string::npos) << o.output;
  EXPECT_EQ(o.output.find("ssmv run: default suite"), std::string::npos) << "the suite started: " << o.output;
  std::ofstream(dir_ / "cex.json") << "{}";
  const Outcome r = run_here("replay cex.json --markdown " + dir_.string());
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("is a folder"), std::string::npos) << r.output;
}

TEST_F(FilesCli, DistinctOutputsAreWritten) {
  const Outcome o = run_here("check D.npz --no-sharp --json r.json --markdown r.md");
  EXPECT_EQ(o.code, 0) << o.output;
  EXPECT_TRUE(fs::exists(dir_ / "r.json"));
  EXPECT_TRUE(fs::exists(dir_ / "r.md"));
  EXPECT_EQ(bytes(dump_), dump_bytes_);
}

}  // namespace
}  // namespace ssmv::cli
