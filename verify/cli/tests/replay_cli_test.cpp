// `ssmv replay FILE` end to end: counterexample files written by the library (as the
// property suites write them) are re-run by the ssmv binary, which prints the verdict and
// exits 0 (no VIOLATION or INVALID), and rejects a malformed file with exit code 2 and a
// message naming the file.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "verify/cli/tests/run_ssmv.h"
#include "verify/reports/counterexample.h"
#include "spec/realistic_problem.h"

namespace ssmv::verify {
namespace {

using cli::testing::Outcome;
using cli::testing::run_ssmv;

class ReplayCli : public cli::testing::TempDirTest {
 protected:
  ReplayCli() : TempDirTest("ssmv_replay_cli_") {}
};

TEST_F(ReplayCli, ChunkScanAndHandoffFilesReplayWithinContract) {
  const Problem p = realistic_problem(Shape{{0, 40, 70}, 2, 4, 8, 1}, Formats{}, 5);
  Counterexample c;
  c.kernel = "chunk_scan";
  c.contract = "chunk_scan.production";
  c.chunk_size = 64;
  c.problem = p;
  c.property = "replay_cli_test";
  c.reproduce = "written by the test, not found by a property";
  c.verdict = "WITHIN_CONTRACT";
  const std::string chunk_file = (dir_ / "chunk.json").string();
  write_counterexample(chunk_file, c);
  const Outcome a = run_ssmv("replay " + chunk_file);
  EXPECT_EQ(a.code, 0) << a.output;
  EXPECT_NE(a.output.find("verdict now: WITHIN_CONTRACT (recorded: WITHIN_CONTRACT)"), std::string::npos) << a.output;

  c.kernel = "chunk_scan+ssu";
  c.contract = "chunk_scan.fp32+ssu";
  c.split = 25;  // within both sequences (40 and 30 tokens)
  const std::string handoff_file = (dir_ / "handoff.json").string();
  write_counterexample(handoff_file, c);
  const Outcome b = run_ssmv("replay " + handoff_file + " --json " + (dir_ / "r.json").string());
  EXPECT_EQ(b.code, 0) << b.output;
  EXPECT_TRUE(std::filesystem::exists(dir_ / "r.json"));
}

TEST_F(ReplayCli, SsuFileReplays) {
  const Problem drawn = realistic_problem(Shape{{0, 2, 4}, 2, 4, 8, 1}, Formats{}, 6);
  Counterexample c;
  c.kernel = "ssu";
  c.contract = "ssu";
  c.decode.problem = drawn;
  c.decode.problem.initial_state.clear();
  c.decode.slots = 3;
  c.decode.state_pool = realistic_problem(Shape{{0, 1, 2, 3}, 2, 4, 8, 1}, Formats{}, 7).initial_state;
  c.decode.slot_in = {2, c.decode.pad_slot_id};
  c.verdict = "EXACT";
  const std::string file = (dir_ / "ssu.json").string();
  write_counterexample(file, c);
  const Outcome o = run_ssmv("replay " + file);
  EXPECT_EQ(o.code, 0) << o.output;
  EXPECT_NE(o.output.find("verdict now:"), std::string::npos) << o.output;
}

TEST_F(ReplayCli, MalformedFileIsRejectedWithItsName) {
  const std::string file = (dir_ / "broken.json").string();
  std::ofstream(file) << "{\"format\": \"ssmv-counterexample\", ";
  const Outcome o = run_ssmv("replay " + file);
  EXPECT_EQ(o.code, 2) << o.output;
  EXPECT_NE(o.output.find("broken.json"), std::string::npos) << o.output;
}

}  // namespace
}  // namespace ssmv::verify
