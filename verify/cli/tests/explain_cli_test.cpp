// `ssmv check` explains itself on the terminal: per bad tensor the count and share of bad
// elements and the worst few at their index in the tensor's own rank (y [T, H, P]: three
// indices) with computed, exact, bound and usage, an INVALID's value named, then the next
// step; likely mistakes get a hint (a forgotten --dt-softplus, bf16 values stored as fp32, a
// folder as contract); --contract re-judges a self-describing dump with a one-line note, and
// an edited preset is reported under its file's name. Dumps are a mamba_ssm SSU fixture
// (verify/tests/triton_fixtures/, 3 sequences of 4 tokens, H 4, P 16, N 64) changed here.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "verify/cli/tests/run_ssmv.h"
#include "verify/tensor_file/tensor_file.h"

namespace ssmv::cli {
namespace {

namespace fs = std::filesystem;
using testing::Outcome;
using testing::run_ssmv;

class ExplainCli : public testing::TempDirTest {
 protected:
  ExplainCli() : TempDirTest("ssmv_explain_cli_") {}
  void SetUp() override {
    TempDirTest::SetUp();
    tensors_ = tensor_file::load_tensor_file(
        std::string(SSMV_TRITON_FIXTURES) + "/ssu_bf16in_fp32state_z_D_T4.npz", &metadata_);
  }
  std::string save(const std::string& name, const tensor_file::TensorMap& m,
                   const std::map<std::string, std::string>& metadata) const {
    const std::string path = (dir_ / name).string();
    tensor_file::save_npz(path, m, metadata);
    return path;
  }
  // The bf16 bit pattern of y's flat element i (y is stored as int16 bit patterns).
  uint16_t& y_bits(tensor_file::TensorMap& m, size_t i) const {
    return reinterpret_cast<uint16_t*>(m.at("y").mutable_bytes().data())[i];
  }
  tensor_file::TensorMap tensors_;
  std::map<std::string, std::string> metadata_;
};

TEST_F(ExplainCli, BadElementsAreListedAtTheirIndexWithTheNextStep) {
  tensor_file::TensorMap m = tensors_;
  // y is [12, 4, 16]: flat 100 = [1, 2, 4], flat 5 = [0, 0, 5].
  y_bits(m, 100) = 0x7fc0;  // a bf16 NaN
  y_bits(m, 5) ^= 0x0100;   // the exponent's lowest bit: the value doubles or halves
  const Outcome o = run_ssmv("check " + save("bad.npz", m, metadata_) + " --no-sharp");
  EXPECT_EQ(o.code, 1) << o.output;
  EXPECT_NE(o.output.find("y: 2 of 768 elements bad (0.26%): 1 VIOLATION, 1 INVALID"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("y[1, 2, 4] (sequence 0, token 1, head 2, dim 4): INVALID, computed nan (bf16 0x7fc0)"),
            std::string::npos) << o.output;
  EXPECT_NE(o.output.find("y[0, 0, 5] (sequence 0, token 0, head 0, dim 5): VIOLATION, computed "), std::string::npos)
      << o.output;
  EXPECT_NE(o.output.find("next: --markdown FILE lists the bad elements"), std::string::npos) << o.output;
  // INVALID ranks first, then the VIOLATION.
  EXPECT_LT(o.output.find("y[1, 2, 4]"), o.output.find("y[0, 0, 5]")) << o.output;
}

TEST_F(ExplainCli, JunitHasOneTestCasePerTensorAndFailsTheBadOne) {
  tensor_file::TensorMap m = tensors_;
  y_bits(m, 100) = 0x7fc0;
  const std::string xml = (dir_ / "r.xml").string();
  const Outcome o = run_ssmv("check " + save("bad.npz", m, metadata_) + " --no-sharp --junit " + xml);
  EXPECT_EQ(o.code, 1) << o.output;
  std::ifstream in(xml);
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(text.find("<testsuites name=\"ssmv check\" tests=\"2\" failures=\"1\" errors=\"0\">"),
            std::string::npos) << text;
  EXPECT_NE(text.find("<testcase classname=\"ssu (triton.ssu, external)\" name=\"y\">\n      <failure "
                      "type=\"INVALID\" message=\"y: 1 of 768 elements bad"), std::string::npos) << text;
  EXPECT_NE(text.find("<testcase classname=\"ssu (triton.ssu, external)\" name=\"final_state\"/>"),
            std::string::npos) << text;
  // Well-formed XML, as a CI system's parser reads it.
  const std::string parse = "/usr/bin/python3 -c \"import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])\" " + xml;
  EXPECT_EQ(std::system(parse.c_str()), 0) << text;
}

TEST_F(ExplainCli, AForgottenSoftplusGetsAHintNamingTheFile) {
  const std::string f = save("plain.npz", tensors_, {});  // no metadata: judged without softplus
  const Outcome o = run_ssmv("check " + f + " --kernel ssu --contract triton.ssu");
  EXPECT_EQ(o.code, 2) << o.output;
  EXPECT_NE(o.output.find("ssmv check " + f + ": transcendental 'exp'"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("hint: judged without softplus, δ = dt + dt_bias is <= 0 at 48 of 48"), std::string::npos)
      << o.output;
  EXPECT_NE(o.output.find("needs --dt-softplus"), std::string::npos) << o.output;
  EXPECT_EQ(run_ssmv("check " + f + " --kernel ssu --contract triton.ssu --dt-softplus --no-sharp").code, 0);
}

TEST_F(ExplainCli, Bf16ValuesStoredAsFp32GetAHint) {
  tensor_file::TensorMap m = tensors_;
  const tensor_file::Tensor& y = tensors_.at("y");
  std::vector<double> widened(size_t(y.element_count()));
  for (size_t i = 0; i < widened.size(); ++i) {
    const uint32_t bits = uint32_t(reinterpret_cast<const uint16_t*>(y.bytes().data())[i]) << 16;
    float v;
    std::memcpy(&v, &bits, sizeof v);
    widened[i] = v;
  }
  m["y"] = tensor_file::make_tensor("y", tensor_file::DType::f32, y.shape, widened);
  std::map<std::string, std::string> meta = metadata_;
  meta["ssmv.output_format"] = "fp32";
  const Outcome o = run_ssmv("check " + save("widened.npz", m, meta) + " --no-sharp");
  EXPECT_EQ(o.code, 1) << o.output;
  EXPECT_NE(o.output.find("hint: every value of y (declared fp32) is a bf16 value: these look like bf16 values stored "
                          "wider: --output-format bf16?"), std::string::npos) << o.output;
}

TEST_F(ExplainCli, AFolderAsContractSaysSo) {
  fs::create_directories(dir_ / "contracts");
  const Outcome o = run_ssmv("check " + save("d.npz", tensors_, metadata_) + " --contract " + (dir_ / "contracts").string());
  EXPECT_EQ(o.code, 2) << o.output;
  EXPECT_NE(o.output.find("is a folder, not a contract JSON file"), std::string::npos) << o.output;
}

TEST_F(ExplainCli, AContractFlagReJudgesASelfDescribingDump) {
  const std::string f = save("d.npz", tensors_, metadata_);  // ssmv.contract = triton.ssu
  const Outcome shown = run_ssmv("contract show triton.ssu > " + (dir_ / "mine.json").string());
  ASSERT_EQ(shown.code, 0) << shown.output;
  // An unedited copy keeps the preset's name; the note says what it replaced.
  const Outcome same = run_ssmv("check " + f + " --no-sharp --contract " + (dir_ / "mine.json").string());
  EXPECT_EQ(same.code, 0) << same.output;
  EXPECT_NE(same.output.find("replaces " + f + " metadata 'ssmv.contract' = 'triton.ssu'"), std::string::npos)
      << same.output;
  // An edited copy (a wider exp budget: still within) is reported under the file's name.
  std::ifstream in(dir_ / "mine.json");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  const std::string budget = "\"ulp_const\": 2.006";
  const size_t at = text.find(budget);
  ASSERT_NE(at, std::string::npos) << text;
  text.replace(at, budget.size(), "\"ulp_const\": 3.5");
  std::ofstream(dir_ / "mine.json") << text;
  const Outcome edited = run_ssmv("check " + f + " --no-sharp --contract " + (dir_ / "mine.json").string());
  EXPECT_EQ(edited.code, 0) << edited.output;
  EXPECT_NE(edited.output.find("mine (edited from triton.ssu)"), std::string::npos) << edited.output;
}

}  // namespace
}  // namespace ssmv::cli
