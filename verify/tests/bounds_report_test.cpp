// `ssmv bounds` on the quick grid (verify/bounds_report/): the JSON schema, the invariants a
// correct report must hold — every twin element within its bound (usage ≤ 1), percentiles
// ordered, each attributed element's parts summing to its bound — and the grid's errors.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "fast/chunk_scan/contract.h"
#include "verify/bounds_report/bounds_json.h"
#include "verify/bounds_report/bounds_markdown.h"
#include "verify/bounds_report/bounds_report.h"
#include "verify/bounds_report/percentiles.h"
#include "verify/contracts/contract_json.h"

namespace ssmv::verify {
namespace {

const BoundsReport& quick_report() {
  static const BoundsReport r = bounds_report(quick_bounds_grid(), [](const std::string&) {});
  return r;
}

void expect_ordered(const json::Value& p, const std::string& what) {
  ASSERT_TRUE(p.is_object()) << what;
  for (const char* key : {"count", "p50", "p99", "max"}) ASSERT_TRUE(p.contains(key)) << what << "." << key;
  if (p["count"].get<int64_t>() == 0) return;
  const double p50 = p["p50"].get<double>(), p99 = p["p99"].get<double>(), max = p["max"].get<double>();
  EXPECT_LE(p50, p99) << what;
  EXPECT_LE(p99, max) << what;
  EXPECT_GE(p50, 0) << what;
}

void expect_frontier(const json::Value& f, const std::string& what) {
  ASSERT_TRUE(f.contains("smallest_atol")) << what;
  ASSERT_EQ(f["smallest_atol"].size(), std::size(kFrontierRtols)) << what;
  double previous = HUGE_VAL;
  for (const json::Value& a : f["smallest_atol"]) {
    ASSERT_TRUE(a["atol"].is_number()) << what;  // finite: no NaN on realistic data
    // More rtol never needs more atol.
    EXPECT_LE(a["atol"].get<double>(), previous) << what;
    previous = a["atol"].get<double>();
  }
  ASSERT_TRUE(f["smallest_rtol_at_atol_0"].is_number() || f["smallest_rtol_at_atol_0"].is_null()) << what;
  for (const char* key : {"rtol", "atol", "violations"}) ASSERT_TRUE(f["mamba_ssm"].contains(key)) << what;
}

TEST(BoundsReport, QuickGridJsonHasTheSchemaAndItsInvariants) {
  const json::Value v = bounds_to_json(quick_report());
  ASSERT_EQ(v["schema"], kBoundsSchema);
  for (const char* key : {"command", "threads", "seconds", "reference_seconds", "grid", "skipped", "rows"}) {
    ASSERT_TRUE(v.contains(key)) << key;
  }
  // Quick grid: 3 problems × 2 output formats × (2 sequential + 3 chunked contracts at L = 64).
  ASSERT_EQ(v["rows"].size(), 30u);
  int measured = 0;
  for (const json::Value& row : v["rows"]) {
    const std::string where = row["contract"].get<std::string>() + " T=" + std::to_string(row["T"].get<int64_t>()) +
                              " N=" + std::to_string(row["N"].get<int64_t>()) + " " +
                              row["formats"]["output"].get<std::string>();
    for (const char* key : {"contract", "family", "twin", "twin_note", "T", "N", "P", "H", "G", "chunk_size", "formats",
                            "bound_seconds", "twin_seconds", "tensors"}) {
      ASSERT_TRUE(row.contains(key)) << where << ": " << key;
    }
    // The bundled contracts have their twin, the Triton presets none.
    const std::string contract = row["contract"];
    EXPECT_EQ(row["twin"].is_null(), contract.rfind("triton.", 0) == 0) << where;
    ASSERT_EQ(row["tensors"].size(), 2u) << where;
    for (const json::Value& t : row["tensors"]) {
      const std::string at = where + " " + t["name"].get<std::string>();
      for (const char* key : {"bound_over_exact", "bound_over_scale", "bound_ulps", "bound_ulps_at_scale",
                              "fp32_reference_error_over_scale", "mamba_ssm_allowed_over_bound"}) {
        expect_ordered(t[key], at + " " + key);
      }
      EXPECT_GT(t["bound_over_scale"]["count"].get<int64_t>(), 0) << at;
      expect_frontier(t["tolerance_guaranteed"], at + " guaranteed");
      // The breakdown: three attributed elements, their parts summing to the bound.
      ASSERT_EQ(t["sources"].size(), 3u) << at;
      for (const json::Value& s : t["sources"]) {
        const double bound = s["bound"].get<double>(), sum = s["parts_sum"].get<double>();
        EXPECT_NEAR(sum, bound, 1e-12 * bound) << at << " at " << s["at"];
        double shares = 0;
        for (const json::Value& sh : s["shares"]) shares += sh["share"].get<double>();
        EXPECT_NEAR(shares, 1.0, 1e-12) << at;
      }
      if (t["measured"].is_null()) continue;
      ++measured;
      const json::Value& m = t["measured"];
      for (const char* key : {"error_over_exact", "error_over_scale", "usage"}) expect_ordered(m[key], at + " " + key);
      // A correct twin is within its contract: usage ≤ 1 everywhere, nothing over the bound.
      EXPECT_LE(m["usage"]["max"].get<double>(), 1.0) << at;
      EXPECT_EQ(m["over_bound"], 0) << at;
      expect_frontier(m["tolerance"], at + " measured");
      // What every honouring kernel may need covers what the twin needs.
      for (size_t k = 0; k < std::size(kFrontierRtols); ++k) {
        EXPECT_LE(m["tolerance"]["smallest_atol"][k]["atol"].get<double>(),
                  t["tolerance_guaranteed"]["smallest_atol"][k]["atol"].get<double>())
            << at;
      }
    }
  }
  EXPECT_EQ(measured, 3 * 2 * 3 * 2);  // ssu and the two chunk_scan contracts, y and final_state
}

TEST(BoundsReport, MarkdownNamesEveryContractAndTheCommand) {
  BoundsReport r = quick_report();
  r.command = "ssmv bounds --quick";
  const std::string md = bounds_to_markdown(r, "error-bounds/");
  EXPECT_NE(md.find("ssmv bounds --quick"), std::string::npos);
  for (const char* c : {"`ssu`", "`triton.ssu`", "`chunk_scan.production`", "`chunk_scan.fp32`", "`triton.chunk_scan`"}) {
    EXPECT_NE(md.find(c), std::string::npos) << c;
  }
  EXPECT_NE(md.find("error-bounds/bounds-vs-T.svg"), std::string::npos);
  EXPECT_NE(md.find("## Why the contract is the better test"), std::string::npos);
}

// Mamba2's contracts alone: no other family's members in the JSON or sections on the page (the
// output as before the family seam ran bounds); beside a Mamba-3 preset, Mamba2's rows and page
// parts unchanged and the family's section after them.
TEST(BoundsReport, AnotherFamilysPresetsAddRowsAndLeaveMamba2sAsTheyWere) {
  const json::Value quick = bounds_to_json(quick_report());
  EXPECT_FALSE(quick.contains("families"));
  EXPECT_FALSE(quick.contains("family_rows"));
  EXPECT_EQ(bounds_to_markdown(quick_report(), "").find("## Family"), std::string::npos);

  BoundsGrid g = quick_bounds_grid();
  g.lengths = {32};
  g.base_length = 32;
  g.output_formats = {Format::bf16};
  g.contracts = {"ssu"};
  const BoundsReport alone = bounds_report(g, [](const std::string&) {});
  g.contracts = {"mamba3_siso_step.host_emulation", "ssu"};
  const BoundsReport both = bounds_report(g, [](const std::string&) {});
  ASSERT_EQ(both.rows.size(), alone.rows.size());
  for (size_t i = 0; i < alone.rows.size(); ++i) {
    EXPECT_EQ(json::dump(bounds_to_json(alone)["rows"][i]["tensors"], 1),
              json::dump(bounds_to_json(both)["rows"][i]["tensors"], 1));
  }
  ASSERT_EQ(both.family_rows.size(), 2u);  // (T, N) = (32, 16), (32, 32)
  for (const FamilyRow& row : both.family_rows) {
    EXPECT_EQ(row.family, "mamba3");
    EXPECT_EQ(row.kernel, "mamba3_step");
    ASSERT_EQ(row.tensors.size(), 4u);
    for (const FamilyTensorBounds& t : row.tensors) {
      EXPECT_TRUE(t.measured) << t.name;
      EXPECT_LE(t.usage.max, 1.0) << t.name;
      EXPECT_GT(t.bound_over_scale.p50, 0) << t.name;
    }
  }
  const std::string md = bounds_to_markdown(both, "");
  const size_t reading = md.find("## Reading this page"), family = md.find("## Family `mamba3`"),
               tolerances = md.find("## Tolerances");
  EXPECT_LT(reading, family);
  EXPECT_LT(md.find("## `ssu` (sequential)"), family);
  EXPECT_LT(family, tolerances);
  EXPECT_NE(tolerances, std::string::npos);
}

// A contract that does not describe the grid's input format skips it, and says so.
TEST(BoundsReport, AContractWithoutTheInputFormatIsSkippedAndNoted) {
  BoundsGrid g = quick_bounds_grid();
  g.contracts = {"triton.chunk_scan", "ssu"};
  g.lengths = {32};
  g.state_dims = {16};
  g.base_length = 32;
  g.input_formats = {Format::fp32};
  g.output_formats = {Format::fp32};
  const BoundsReport r = bounds_report(g, [](const std::string&) {});
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(r.rows[0].contract, "ssu");
  ASSERT_EQ(r.skipped.size(), 1u);
  EXPECT_NE(r.skipped[0].find("'triton.chunk_scan'"), std::string::npos) << r.skipped[0];
}

// A chunked contract file runs at its own chunk size only; it is measured on the twin when it
// is exactly a bundled kernel's contract, and not when it differs (here: only its name).
TEST(BoundsReport, AContractFileRunsAtItsChunkSizeAndMeetsItsTwinOnlyWhenIdentical) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "ssmv_bounds_report_test";
  std::filesystem::create_directories(dir);
  Contract c = chunk_scan::contract(chunk_scan::ContractKind::fp32, 128);
  const std::string same = (dir / "same.json").string(), renamed = (dir / "renamed.json").string();
  write_contract_file(same, c);
  c.name = "my_chunk_scan";
  write_contract_file(renamed, c);
  BoundsGrid g = quick_bounds_grid();
  g.contracts = {same, renamed};
  g.output_formats = {Format::fp32};
  const BoundsReport r = bounds_report(g, [](const std::string&) {});
  ASSERT_EQ(r.rows.size(), 6u);  // 3 problems × 2 contracts, at L = 128 (not the grid's 64)
  for (const BoundsRow& row : r.rows) {
    EXPECT_EQ(row.chunk_size, 128);
    EXPECT_EQ(row.twin.empty(), row.contract == "my_chunk_scan") << row.contract;
    if (row.contract == "my_chunk_scan") {
      EXPECT_NE(row.twin_note.find("no bundled twin"), std::string::npos);
    }
  }
  std::filesystem::remove_all(dir);
}

TEST(BoundsGrid, BadGridsNameTheOption) {
  const auto message = [](BoundsGrid g) {
    try {
      validate_grid(g);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  BoundsGrid g = quick_bounds_grid();
  g.lengths = {};
  EXPECT_EQ(message(g), "option '--lengths': the list is empty");
  g = quick_bounds_grid();
  g.state_dims = {16, -4};
  EXPECT_EQ(message(g), "option '--state-dims' = -4 is not positive");
  g = quick_bounds_grid();
  g.base_length = 33;
  EXPECT_EQ(message(g), "option '--base-length' = 33 is not one of '--lengths'");
  g = quick_bounds_grid();
  g.groups = 3;
  EXPECT_EQ(message(g), "option '--groups' = 3 does not divide --heads = 2");
  g = quick_bounds_grid();
  g.contracts = {"chunk_scan.bf17"};
  try {
    bounds_report(g, [](const std::string&) {});
    ADD_FAILURE() << "accepted an unknown contract";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("option '--contract' = 'chunk_scan.bf17': ", 0), 0u) << e.what();
  }
}

// Nearest rank: the value at rank ⌈q·n⌉ of the sorted sample, with the element it belongs to.
TEST(Percentiles, NearestRankWithTheElement) {
  for (const int64_t n : {1, 100, 200, 1000, 12345}) {
    std::vector<std::pair<double, int64_t>> v;
    for (int64_t i = n; i >= 1; --i) v.emplace_back(double(i), 10 * i);  // value i at element 10·i, reversed
    const Percentiles p = percentiles(v);
    EXPECT_EQ(p.count, n);
    EXPECT_EQ(p.p50, double((50 * n + 99) / 100)) << n;
    EXPECT_EQ(p.p99, double((99 * n + 99) / 100)) << n;
    EXPECT_EQ(p.max, double(n)) << n;
    EXPECT_EQ(p.at_p99, 10 * int64_t(p.p99)) << n;
  }
  EXPECT_EQ(percentiles({}).count, 0);
}

// The sweeps share their base point: the quick grid's (T, N) are (32, 16), (160, 16), (160, 32).
TEST(BoundsGrid, SweepsThroughTheBasePoint) {
  const std::vector<GridProblem> q = grid_problems(quick_bounds_grid());
  ASSERT_EQ(q.size(), 3u);
  EXPECT_EQ(q[0].T, 32);
  EXPECT_EQ(q[1].T, 160);
  EXPECT_EQ(q[2].N, 32);
  BoundsGrid g = default_bounds_grid();
  const std::vector<GridProblem> d = grid_problems(g);
  ASSERT_EQ(d.size(), 8u);  // 5 lengths + 4 state dims − the shared base point
  for (const GridProblem& p : d) {
    const bool base = p.T == g.base_length && p.N == g.base_state_dim;
    EXPECT_EQ(p.chunk_sizes.size(), base ? 3u : 1u) << p.T << " " << p.N;
  }
}

}  // namespace
}  // namespace ssmv::verify
