// Mamba-3's side of `ssmv bounds` and `ssmv contract` (verify/family/mamba3/bounds_rows.h,
// contracts.h) through the family seam: the six presets registered, and the rows of a small grid
// problem — every tensor's bound positive and finite beside the exact values, the host emulation
// within it (usage <= 1), a prefill row the same whether the reference kept |S| at its chunks or
// at every token (the trace cut to the chunks).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "verify/family/registry.h"

namespace ssmv::family {
namespace {

const std::vector<std::string> kPresets = {"mamba3_siso_step.production", "mamba3_siso_step.host_emulation",
                                           "mamba3_siso_combined.production", "mamba3_siso_combined.fp32_angles",
                                           "mamba3_siso_combined.host_emulation"};

// What contract_presets() lists: kPresets and the bundled kernel's (fast/mamba3/contract.h), after the
// step kernel's two.
const std::vector<std::string> kRegistered = {"mamba3_siso_step.production", "mamba3_siso_step.host_emulation",
                                              "ssmv.mamba3_step", "mamba3_siso_combined.production",
                                              "mamba3_siso_combined.fp32_angles", "mamba3_siso_combined.host_emulation"};

BoundsProblem problem() { return BoundsProblem{40, 16, 2, 4, 1, {16, 32}, {Format::bf16, Format::fp32}, 7}; }

TEST(Mamba3Bounds, SixPresetsRegisteredWithDescriptionsAndTheirContractFiles) {
  std::vector<std::string> names;
  for (const Family* f : families()) {
    for (const ContractPreset& p : f->contract_presets()) {
      names.push_back(p.name);
      EXPECT_EQ(f->name(), "mamba3") << p.name;
      EXPECT_FALSE(p.description.empty()) << p.name;
      EXPECT_EQ(p.description.find('\n'), std::string::npos) << p.name << ": one line";
      EXPECT_NE(p.show.find("\"family\": \"" + p.family + "\""), std::string::npos) << p.show;
      EXPECT_EQ(family_of_contract(p.name), f);
    }
  }
  EXPECT_EQ(names, kRegistered);
  EXPECT_EQ(family_of_contract("ssu"), nullptr);  // Mamba2's presets are contract_json.h's
  EXPECT_EQ(family_of_contract("nosuch"), nullptr);
  EXPECT_NE(family_preset_list().find("mamba3_siso_combined.host_emulation"), std::string::npos);
}

TEST(Mamba3Bounds, RowsOfEveryTensorPositiveAndTheHostEmulationWithinThem) {
  const Family& f = *family_of_contract("mamba3_siso_combined.host_emulation");
  const BoundsProblem q = problem();
  const BoundsRows r = f.bounds_rows(kPresets, q);
  // Per output format: the two step contracts once, the three prefill contracts at both chunk sizes.
  ASSERT_EQ(r.rows.size(), 2u * (2 + 3 * 2));
  EXPECT_GT(r.reference_seconds, 0);
  EXPECT_NE(r.problems.find("seed 7"), std::string::npos);
  const int64_t R = q.N / 4;
  for (const BoundsRow& row : r.rows) {
    const bool host = row.contract.find("host_emulation") != std::string::npos;
    EXPECT_EQ(row.kernel, row.contract.rfind("mamba3_siso_step", 0) == 0 ? "mamba3_step" : "mamba3_prefill");
    EXPECT_EQ(host, !row.measured.empty()) << row.contract;
    EXPECT_EQ(host, row.note.empty()) << row.contract;
    ASSERT_EQ(row.tensors.size(), 4u);
    const std::vector<std::string> names = {"y", "final_angle_state", "final_state", "final_B_prev"};
    const std::vector<int64_t> sizes = {q.T * q.H * q.P, q.H * R, q.H * q.P * q.N, q.H * q.N};
    for (size_t k = 0; k < 4; ++k) {
      const BoundsTensor& t = row.tensors[k];
      const std::string what = row.contract + " L=" + std::to_string(row.chunk_size) + " " + t.name;
      EXPECT_EQ(t.name, names[k]);
      ASSERT_EQ(int64_t(t.bound.size()), sizes[k]) << what;
      ASSERT_EQ(t.exact.size(), t.bound.size()) << what;
      ASSERT_EQ(t.scale.size(), t.bound.size()) << what;
      ASSERT_EQ(t.usage.size(), host ? t.bound.size() : 0u) << what;
      EXPECT_EQ(t.over_bound, 0) << what;
      double most = 0;
      for (size_t i = 0; i < t.bound.size(); ++i) {
        ASSERT_TRUE(std::isfinite(t.bound[i]) && t.bound[i] > 0) << what << "[" << i << "] = " << t.bound[i];
        ASSERT_TRUE(std::isfinite(t.exact[i]) && std::isfinite(t.scale[i])) << what << "[" << i << "]";
        if (host) {
          ASSERT_LE(t.usage[i], 1.0) << what << "[" << i << "]";
          most = std::max(most, t.usage[i]);
        }
      }
      // Not vacuous: the emulation's errors are of the bound's order somewhere.
      if (host && k != 1) {
        EXPECT_GT(most, 1e-3) << what;
      }
    }
  }
}

// The reference keeps |S| at the chunks every row can be cut from — every token when a step row
// needs it, the chunk sizes' gcd otherwise — and a prefill row's trace is cut from it: the same
// rows as from a reference run at the row's own chunk size.
void expect_same_rows(const BoundsRow& a, const BoundsRow& b) {
  ASSERT_EQ(a.contract, b.contract);
  ASSERT_EQ(a.chunk_size, b.chunk_size);
  for (size_t k = 0; k < a.tensors.size(); ++k) {
    EXPECT_EQ(a.tensors[k].bound, b.tensors[k].bound) << a.tensors[k].name;
    EXPECT_EQ(a.tensors[k].exact, b.tensors[k].exact) << a.tensors[k].name;
  }
}

TEST(Mamba3Bounds, PrefillRowsTheSameFromAFinerTrace) {
  const Family& f = *family_of_contract("mamba3_siso_combined.production");
  BoundsProblem q = problem();
  q.outputs = {Format::bf16};
  q.chunk_sizes = {32};
  const BoundsRows alone = f.bounds_rows({"mamba3_siso_combined.production"}, q);
  ASSERT_EQ(alone.rows.size(), 1u);
  const BoundsRows with_step = f.bounds_rows({"mamba3_siso_step.production", "mamba3_siso_combined.production"}, q);
  ASSERT_EQ(with_step.rows.size(), 2u);
  expect_same_rows(alone.rows[0], with_step.rows[1]);  // |S| at every token, cut to chunks of 32
  q.chunk_sizes = {16, 32};
  const BoundsRows two = f.bounds_rows({"mamba3_siso_combined.production"}, q);
  ASSERT_EQ(two.rows.size(), 2u);
  expect_same_rows(alone.rows[0], two.rows[1]);  // at chunks of 16, cut to 32 (T = 40: ends 31, 39)
}

TEST(Mamba3Bounds, ANameThatIsNotAMamba3PresetIsRefused) {
  const Family& f = *family_of_contract("mamba3_siso_step.production");
  EXPECT_ANY_THROW(f.bounds_rows({"ssu"}, problem()));
}

}  // namespace
}  // namespace ssmv::family
