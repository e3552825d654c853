// `ssmv contract` and `ssmv bounds` on another recurrence family's presets (Mamba-3's, through the
// family seam: verify/family/family.h contract_presets, bounds_rows): listed after Mamba2's, shown
// as their contract files, run as rows of `ssmv bounds` for every tensor with the host emulation
// within its bound; an unknown name still a usage error that names both families' presets.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "verify/cli/tests/run_ssmv.h"
#include "verify/contracts/contract_json.h"
#include "verify/json/json.h"

namespace ssmv::cli {
namespace {

using testing::Outcome;
using testing::run_ssmv;

const std::vector<std::string> kMamba3 = {"mamba3_siso_step.production",     "mamba3_siso_step.host_emulation",
                                          "ssmv.mamba3_step",                "mamba3_siso_combined.production",
                                          "mamba3_siso_combined.fp32_angles", "mamba3_siso_combined.host_emulation"};

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::string file_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(FamilyCli, ContractListGivesMamba2sPresetsThenTheSixMamba3Ones) {
  const Outcome o = run_ssmv("contract list");
  ASSERT_EQ(o.code, 0) << o.output;
  const std::vector<std::string> got = lines(o.output);
  const std::vector<std::string>& mamba2 = verify::contract_preset_names();
  ASSERT_EQ(got.size(), mamba2.size() + kMamba3.size()) << o.output;
  for (size_t i = 0; i < mamba2.size(); ++i) EXPECT_EQ(got[i].rfind(mamba2[i] + " ", 0), 0u) << got[i];
  for (size_t i = 0; i < kMamba3.size(); ++i) {
    const std::string& line = got[mamba2.size() + i];
    EXPECT_EQ(line.rfind(kMamba3[i] + " ", 0), 0u) << line;
    const std::string kind = kMamba3[i].find("mamba3_siso_combined") == std::string::npos ? " mamba3_step "
                                                                                          : " mamba3_prefill ";
    EXPECT_NE(line.find(kind), std::string::npos) << line;
    EXPECT_GT(line.size(), 80u) << "a description: " << line;
  }
}

TEST(FamilyCli, ContractShowPrintsAMamba3PresetAsItsContractFile) {
  const Outcome o = run_ssmv("contract show mamba3_siso_combined.production");
  ASSERT_EQ(o.code, 0) << o.output;
  const json::Value v = json::parse(o.output);
  EXPECT_EQ(v["family"], "mamba3_prefill");
  EXPECT_EQ(v["name"], "mamba3_siso_combined.production");
  EXPECT_EQ(v["angle_store"], "bf16");
  EXPECT_EQ(v["qk_dot_tf32"], true);
  const Outcome chunk = run_ssmv("contract show mamba3_siso_step.production --chunk-size 64");
  EXPECT_EQ(chunk.code, 2) << chunk.output;
  EXPECT_NE(chunk.output.find("'mamba3_siso_step.production' is a mamba3 preset; --chunk-size does not apply"),
            std::string::npos)
      << chunk.output;
  const Outcome unknown = run_ssmv("contract show nosuch");
  EXPECT_EQ(unknown.code, 2) << unknown.output;
  EXPECT_NE(unknown.output.find("contract 'nosuch' is neither a preset"), std::string::npos) << unknown.output;
  EXPECT_NE(unknown.output.find("other families' presets: mamba3_siso_step.production"), std::string::npos)
      << unknown.output;
}

class FamilyBoundsCli : public testing::TempDirTest {
 protected:
  FamilyBoundsCli() : TempDirTest("ssmv_family_cli_") {}
};

// The quick grid's three problems × two output formats, one row each (the prefill at L = 64).
TEST_F(FamilyBoundsCli, Mamba3HostEmulationRowsForEveryTensorWithinTheBound) {
  const Outcome o = run_ssmv("bounds --quick --threads 2 --contract mamba3_siso_combined.host_emulation "
                             "--out-json b.json --out-md b.md",
                             dir_.string());
  ASSERT_EQ(o.code, 0) << o.output;
  EXPECT_NE(o.output.find("6 rows in"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("every twin element within its bound"), std::string::npos) << o.output;
  const json::Value v = json::parse(file_text(dir_ / "b.json"));
  EXPECT_TRUE(v["rows"].empty());
  ASSERT_EQ(v["families"].size(), 1u);
  EXPECT_EQ(v["families"][0]["family"], "mamba3");
  ASSERT_EQ(v["family_rows"].size(), 6u);
  for (const json::Value& row : v["family_rows"]) {
    EXPECT_EQ(row["contract"], "mamba3_siso_combined.host_emulation");
    EXPECT_EQ(row["kernel"], "mamba3_prefill");
    EXPECT_EQ(row["chunk_size"], 64);
    ASSERT_TRUE(row["measured"].is_string());
    const std::vector<std::string> names = {"y", "final_angle_state", "final_state", "final_B_prev"};
    ASSERT_EQ(row["tensors"].size(), names.size());
    for (size_t k = 0; k < names.size(); ++k) {
      const json::Value& t = row["tensors"][k];
      const std::string what = std::to_string(row["T"].get<int64_t>()) + " " + names[k];
      EXPECT_EQ(t["name"], names[k]);
      const int64_t n = t["elements"].get<int64_t>();
      ASSERT_GT(n, 0) << what;
      // Every element has a scale, and its bound is above 0 (the smallest of them at p50 > 0
      // would not show it; the family's test checks each element).
      EXPECT_EQ(t["bound_over_scale"]["count"], n) << what;
      EXPECT_GT(t["bound_over_scale"]["p50"].get<double>(), 0) << what;
      EXPECT_GT(t["bound_ulps"]["p50"].get<double>(), 0) << what;
      ASSERT_TRUE(t["measured"].is_object()) << what;
      EXPECT_EQ(t["measured"]["usage"]["count"], n) << what;
      EXPECT_LE(t["measured"]["usage"]["max"].get<double>(), 1.0) << what;
      EXPECT_EQ(t["measured"]["over_bound"], 0) << what;
    }
  }
  const std::string md = file_text(dir_ / "b.md");
  EXPECT_NE(md.find("## Family `mamba3`"), std::string::npos);
  EXPECT_NE(md.find("### `mamba3_siso_combined.host_emulation` (mamba3_prefill)"), std::string::npos);
  EXPECT_EQ(md.find("## Reading this page"), std::string::npos) << "Mamba2's parts without Mamba2 rows";
  EXPECT_EQ(md.find("## Tolerances"), std::string::npos) << "Mamba2's parts without Mamba2 rows";
}

TEST(FamilyCli, BoundsRefusesAnUnknownContractNamingBothFamiliesPresets) {
  const Outcome o = run_ssmv("bounds --quick --contract mamba3_siso_step.production,nosuch");
  EXPECT_EQ(o.code, 2) << o.output;
  EXPECT_NE(o.output.find("option '--contract' = 'nosuch': contract 'nosuch' is neither a preset (ssu,"),
            std::string::npos)
      << o.output;
  EXPECT_NE(o.output.find("other families' presets: mamba3_siso_step.production"), std::string::npos) << o.output;
}

}  // namespace
}  // namespace ssmv::cli
