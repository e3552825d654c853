// Reports (JSON and Markdown) and side-by-side comparisons on a small realistic problem:
// what an honest run and a run with planted errors write, exactly and atomically.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "verify/contracts/json_fields.h"
#include "verify/reports/report.h"
#include "verify/reports/report_text.h"
#include "verify/judge/side_by_side.h"
#include "verify/tests/check_fixture.h"

namespace ssmv::verify {
namespace {

// y of small_problem() is [T = 70, H = 2, P = 4]; index 100 = (sequence 0, token 12,
// head 1, dim 0) gets y + 1, index 200 = (sequence 0, token 25, head 0, dim 0) the poison.
constexpr int64_t kViolated = 100, kUnwritten = 200;

struct Fixture : ::testing::Test {
  static const Problem& problem() {
    static const Problem p = testing::small_problem();
    return p;
  }
  static const KernelCheck& honest() {
    static const KernelCheck kc = testing::chunk_scan_check(problem());
    return kc;
  }
  static const KernelCheck& planted() {
    static const KernelCheck kc = testing::planted_check(
        problem(), honest(), {{kViolated, testing::plus_one(honest(), kViolated)}, {kUnwritten, poison_bits(Format::bf16)}});
    return kc;
  }
  static Report report() {
    Report r;
    r.ssmv_version = "0.1.0";
    r.command = "ssmv test";
    r.entries.push_back(report_entry("honest", honest(), problem()));
    r.entries.push_back(report_entry("planted", planted(), problem()));
    return r;
  }
};

using ReportTest = Fixture;

TEST_F(ReportTest, JsonHasVerdictsAndTheWorstElementExactly) {
  const json::Value v = report_to_json(report());
  EXPECT_EQ(v.at("schema").get<std::string>(), "ssmv report");
  EXPECT_FALSE(v.at("ok").get<bool>());
  const json::Value& bad = v.at("entries").at(1);
  EXPECT_EQ(bad.at("verdict").get<std::string>(), "INVALID");
  const json::Value& y = bad.at("tensors").at(0);
  EXPECT_EQ(y.at("counts").at("VIOLATION").get<int64_t>(), 1);
  EXPECT_EQ(y.at("counts").at("INVALID").get<int64_t>(), 1);
  EXPECT_EQ(y.at("max_bound_usage").get<std::string>(), "inf");
  const json::Value& w = y.at("worst");
  EXPECT_EQ(w.at("index").get<int64_t>(), kUnwritten);
  EXPECT_EQ(json::dump(w.at("coords")), "[0,25,0,0]");
  EXPECT_EQ(w.at("computed").at("bits").get<std::string>(), "0x7fa5");
  EXPECT_TRUE(w.at("unwritten").get<bool>());
  EXPECT_TRUE(w.at("ulps").is_null());
  // The exact value: 40 digits, the nearest double in %a, the correctly rounded bits.
  const WorstElement& we = planted().tensors[0].worst;
  EXPECT_EQ(w.at("exact").at("decimal40").get<std::string>(), we.exact_decimal);
  EXPECT_EQ(w.at("exact").at("nearest_double").at("hex").get<std::string>(), hexfloat_text(we.exact));
  EXPECT_EQ(w.at("bound").at("hex").get<std::string>(), hexfloat_text(we.bound));
  // The inputs at (t = 25, h = 0, p = 0): x exactly as in the problem, then the B, C rows.
  const json::Value& x = w.at("inputs").at(0);
  EXPECT_EQ(x.at("name").get<std::string>(), "x");
  EXPECT_EQ(json::dump(x.at("index")), "[25,0,0]");
  EXPECT_EQ(x.at("values").at(0).at("bits").get<std::string>(),
            hex_bits(Format::bf16, round_nearest_even(Format::bf16, problem().x[problem().x_index(25, 0, 0)])));
  const json::Value& c_row = w.at("inputs").back();
  EXPECT_EQ(c_row.at("name").get<std::string>(), "C");
  EXPECT_EQ(c_row.at("values").size(), 16u);
  // The greatest absolute difference is the planted + 1.
  EXPECT_EQ(y.at("max_abs_difference").at("index").get<int64_t>(), kViolated);
  // Text round trip: the dump is valid JSON and stable.
  const std::string text = json::dump(v, 2);
  EXPECT_EQ(json::dump(json::parse(text), 2), text);
}

TEST_F(ReportTest, MarkdownHasTheTableAndTheFailingTensorsOnly) {
  const std::string m = report_to_markdown(report());
  EXPECT_NE(m.find("ssmv 0.1.0 · `ssmv test` · **FAIL**"), std::string::npos) << m;
  EXPECT_NE(m.find("| case | kernel | contract | device | tensor | elements | % exact | err/scale max | "
                   "ULPs at scale max | max bound usage | verdict |"),
            std::string::npos);
  EXPECT_NE(m.find("| honest | chunk_scan | chunk_scan.production | twin | y | 560 | "), std::string::npos) << m;
  EXPECT_NE(m.find("| planted | chunk_scan | chunk_scan.production | twin | y | 560 | "), std::string::npos) << m;
  EXPECT_NE(m.find(" | inf | **INVALID** |"), std::string::npos) << m;
  // One failing tensor: planted's y (the honest run and both final states pass).
  EXPECT_NE(m.find("### planted: chunk_scan (chunk_scan.production, twin), tensor `y`: INVALID"), std::string::npos);
  EXPECT_EQ(m.find("### honest"), std::string::npos);
  EXPECT_EQ(m.find("tensor `final_state`"), std::string::npos);
  for (const std::string& line : worst_element_lines(planted().tensors[0])) {
    EXPECT_NE(m.find(line), std::string::npos) << line;
  }
  EXPECT_NE(m.find("| x | [25, 0, 0] | bf16 | `"), std::string::npos) << m;
  EXPECT_NE(m.find("| C | [25, 0][:] | bf16 | row of 16: `"), std::string::npos) << m;
}

// Errors at each element's scale (its magnitude Σ|terms|): in the Markdown table instead of
// raw ULP distances, and beside them in the JSON.
TEST_F(ReportTest, ErrorsAtScaleAreInTheTableAndTheJson) {
  const TensorReport& y = honest().tensors[0];
  ASSERT_GE(y.max_err_over_scale.index, 0);
  const int64_t i = y.max_err_over_scale.index;
  const Problem& p = problem();
  const ref::ExactResult exact = ref::compute(p);
  const double diff = std::fabs(decode(y.format, y.computed[size_t(i)]) - exact.y.nearest[size_t(i)]);
  EXPECT_EQ(y.max_err_over_scale.value, diff / exact.y.magnitude[size_t(i)]);
  EXPECT_LE(y.max_err_over_scale.value, 1.0);  // a within-contract error is below its scale
  const int64_t j = y.max_ulps_at_scale.index;
  const double dj = std::fabs(decode(y.format, y.computed[size_t(j)]) - exact.y.nearest[size_t(j)]);
  EXPECT_EQ(y.max_ulps_at_scale.value, dj / ulp_of(y.format, exact.y.magnitude[size_t(j)]));
  const std::string m = report_to_markdown(report());
  EXPECT_NE(m.find(" | " + err_over_scale_text(y) + " | " + ulps_at_scale_text(y) + " | "), std::string::npos) << m;
  const json::Value v = report_to_json(report());
  const json::Value& t = v.at("entries").at(0).at("tensors").at(0);
  EXPECT_EQ(t.at("max_err_over_scale").at("index").get<int64_t>(), i);
  EXPECT_EQ(t.at("max_ulps_at_scale").at("index").get<int64_t>(), j);
  EXPECT_EQ(t.at("ulp").at("max").get<int64_t>(), y.ulp_max);  // raw ULP distances stay in the JSON
}

// Where the worst element's bound comes from: in the JSON (source, label, share; the
// shares sum to 1, largest first) and, as one line, in the Markdown.
TEST_F(ReportTest, BoundSourcesOfTheWorstElementAreReported) {
  const TensorReport& y = honest().tensors[0];
  ASSERT_FALSE(y.worst_bound_sources.empty());
  const json::Value v = report_to_json(report());
  const json::Value& shares = v.at("entries").at(0).at("tensors").at(0).at("worst_bound_sources");
  ASSERT_EQ(shares.size(), y.worst_bound_sources.size());
  double sum = 0, prev = 2;
  for (const json::Value& s : shares) {
    const double share = s.at("share").get<double>();
    EXPECT_LE(share, prev);
    prev = share;
    sum += share;
    EXPECT_FALSE(s.at("source").get<std::string>().empty());
    EXPECT_EQ(s.at("label").get<std::string>().rfind(s.at("source").get<std::string>(), 0) == 0 ||
                  s.at("source").get<std::string>() == "arithmetic",
              true)
        << s.at("label").get<std::string>();
  }
  EXPECT_NEAR(sum, 1.0, 1e-12);
  const std::string line = bound_sources_text(y);
  EXPECT_EQ(line.rfind("bound of worst y[", 0), 0u) << line;
  EXPECT_NE(line.find("% " + y.worst_bound_sources[0].label), std::string::npos) << line;
  const std::string m = report_to_markdown(report());
  EXPECT_NE(m.find("## Where the bounds come from"), std::string::npos) << m;
  EXPECT_NE(m.find("* honest (chunk_scan.production): " + line), std::string::npos) << m;
}

TEST(ReportText, BoundSourcesTextShowsSixAndSumsTheRest) {
  TensorReport r;
  r.name = "y";
  r.worst.index = 3;
  r.worst.coords = {0, 3, 1, 7};
  r.worst_bound_sources = {{"decayed_CB", "decayed_CB (bf16)", 0.62},  {"output", "output (bf16)", 0.21},
                           {"exp", "exp", 0.091},                       {"sum:y", "sum:y (tree)", 0.05},
                           {"softplus", "softplus", 0.02},              {"arithmetic", "fp32 arithmetic", 0.005},
                           {"sigmoid", "sigmoid", 0.003},               {"underflow", "underflow", 1e-30}};
  EXPECT_EQ(bound_sources_text(r),
            "bound of worst y[0,3,1,7]: 62% decayed_CB (bf16), 21% output (bf16), 9.1% exp, 5% sum:y (tree), "
            "2% softplus, 0.5% fp32 arithmetic, 2 more 0.3%");
  r.worst_bound_sources.resize(6);
  r.worst_bound_sources.push_back({"underflow", "underflow", 1e-30});
  EXPECT_EQ(bound_sources_text(r).substr(bound_sources_text(r).size() - 16), ", 1 more < 0.01%");
  r.worst_bound_sources.clear();
  EXPECT_EQ(bound_sources_text(r), "");
}

TEST_F(ReportTest, MarkdownCellsEscapePipes) {
  Report r;
  r.entries.push_back(report_entry("a|b", "summary", honest()));
  EXPECT_NE(report_to_markdown(r).find("| a\\|b | chunk_scan |"), std::string::npos) << report_to_markdown(r);
}

TEST_F(ReportTest, FilesAreWrittenAtomically) {
  const std::filesystem::path dir = ::testing::TempDir() + "report_test_dir";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string json_path = (dir / "r.json").string(), md_path = (dir / "r.md").string();
  std::ofstream(json_path) << "old";
  write_report_json(json_path, report());
  write_report_markdown(md_path, report());
  EXPECT_EQ(read_text_file(json_path), json::dump(report_to_json(report()), 2) + "\n");
  EXPECT_EQ(read_text_file(md_path), report_to_markdown(report()));
  // Only the two reports: no temporary file left behind.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator()), 2);
  // A destination that cannot be written leaves nothing.
  EXPECT_THROW(write_report_json((dir / "missing" / "r.json").string(), report()), std::runtime_error);
  EXPECT_FALSE(std::filesystem::exists(dir / "missing"));
  std::filesystem::remove_all(dir);
}

// SSU on a decode problem: a state_pool element is traced to the request that wrote its
// slot — that request's token and the slot it read.
TEST(ReportDecode, PoolElementInputsComeFromTheWritingRequest) {
  const Shape s{{0, 1, 2}, 2, 4, 16, 1};  // cu_seqlens, H, P, N, G; two requests of one token
  RealisticOptions o;
  o.initial_state = false;
  DecodeProblem d;
  d.problem = realistic_problem(s, Formats{}, 3, o);
  d.slots = 3;
  d.state_pool = realistic_problem(Shape{{0, 1, 2, 3}, 2, 4, 16, 1}, Formats{}, 4).initial_state;  // [3, H, P, N]
  d.slot_in = {2, 0};  // request 0 reads and writes slot 2, request 1 slot 0; slot 1 untouched
  const KernelCheck kc = check_ssu(d, Device::twin);
  ASSERT_EQ(kc.tensors.at(1).name, "state_pool");
  const TensorReport& pool = kc.tensors[1];
  // Slot 2, head 1, dim 3, state 5: flat ((2·2 + 1)·4 + 3)·16 + 5 = 373.
  const std::vector<InputValue> in = element_inputs(d, pool, 373);
  ASSERT_FALSE(in.empty());
  EXPECT_EQ(in.front().name, "x");
  EXPECT_EQ(in.front().index, (std::vector<int64_t>{0, 1, 3}));  // request 0's token 0
  EXPECT_EQ(in.back().name, "state_pool");
  EXPECT_EQ(in.back().index, (std::vector<int64_t>{2, 1, 3, 5}));
  EXPECT_EQ(in.back().bits.at(0), round_nearest_even(Format::fp32, d.state_pool[373]));
  // Slot 1 is written by nobody: its only input is its own value.
  const std::vector<InputValue> untouched = element_inputs(d, pool, 1 * 2 * 4 * 16);
  ASSERT_EQ(untouched.size(), 1u);
  EXPECT_EQ(untouched[0].index, (std::vector<int64_t>{1, 0, 0, 0}));
  const ReportEntry e = report_entry("ssu decode", kc, d);
  EXPECT_EQ(e.worst_inputs.size(), 2u);
  EXPECT_NE(e.problem.find("slots=3 pad=-1"), std::string::npos) << e.problem;
}

using SideBySideTest = Fixture;

// chunk_scan (production contract) and the hand-off with split 0, i.e. SSU decoding every
// token: two algorithms for the same y. Honest kernels can only diverge within
// bound_a + bound_b (triangle inequality), so every difference is explained.
TEST_F(SideBySideTest, ChunkScanAndSsuOnTheSameTokensDivergeOnlyWithinTheirBounds) {
  const KernelCheck ssu = check_handoff(problem(), 0, chunk_scan::ContractKind::production, 64, Device::twin);
  const SideBySide s = side_by_side("chunk_scan vs SSU", honest(), ssu, problem());
  ASSERT_EQ(s.tensors.size(), 2u);  // y and final_state
  const SideBySideTensor& y = s.tensors[0];
  EXPECT_EQ(y.name, "y");
  EXPECT_EQ(y.identical + y.explained + y.unexplained, y.elements);
  EXPECT_GT(y.explained, 0) << "not vacuous: the two algorithms round differently somewhere";
  EXPECT_EQ(y.unexplained, 0);
  EXPECT_TRUE(s.explained_all());
  EXPECT_LE(y.max_usage, 1.0);
  EXPECT_EQ(s.kernel_b, "ssu");  // a hand-off with split 0 is SSU alone, and is named so
  std::printf("[side by side] y: %lld identical, %lld explained (max usage %s, ULP max %lld); final_state: %lld "
              "identical, %lld explained (max usage %s)\n",
              (long long)y.identical, (long long)y.explained, usage_text(y.max_usage).c_str(),
              (long long)y.ulp_max, (long long)s.tensors[1].identical, (long long)s.tensors[1].explained,
              usage_text(s.tensors[1].max_usage).c_str());
}

TEST_F(SideBySideTest, APlantedErrorIsTheWorstUnexplainedDivergence) {
  const SideBySide s = side_by_side("planted vs honest", planted(), honest(), problem());
  const SideBySideTensor& y = s.tensors[0];
  EXPECT_EQ(y.unexplained, 2);  // the + 1 and the NaN poison
  EXPECT_EQ(y.explained, 0);    // same kernel elsewhere: bit-identical
  EXPECT_EQ(y.identical, y.elements - 2);
  EXPECT_EQ(y.verdict_a, Verdict::invalid);
  EXPECT_EQ(y.verdict_b, honest().tensors[0].overall());
  // Both unexplained; the poison's divergence is infinite, so it is the worst.
  EXPECT_EQ(y.worst.index, kUnwritten);
  EXPECT_EQ(y.worst.coords, (std::vector<int64_t>{0, 25, 0, 0}));
  EXPECT_FALSE(s.explained_all());
  Report r;
  r.comparisons.push_back(s);
  EXPECT_FALSE(r.ok());
  const std::string m = report_to_markdown(r);
  EXPECT_NE(m.find("`y`, worst unexplained divergence at (sequence 0, token 25, head 0, dim 0) [flat index 200]"),
            std::string::npos)
      << m;
  const json::Value v = report_to_json(r);
  EXPECT_EQ(v.at("comparisons").at(0).at("tensors").at(0).at("unexplained").get<int64_t>(), 2);
}

TEST_F(SideBySideTest, MismatchedTensorsAreRejected) {
  KernelCheck other = honest();
  other.tensors[0].computed.pop_back();
  EXPECT_THROW(side_by_side("bad", honest(), other, problem()), std::invalid_argument);
  other.tensors.clear();
  EXPECT_THROW(side_by_side("none", honest(), other, problem()), std::invalid_argument);
}

// A circular tensor (an angle state, period 2π): 0.001 and 2π − 0.001 are 0.002 apart on the
// circle; the divergence is an upper bound of that, above it by at most the slack divergence()
// adds per turn (2^-48) and a few ULPs of 0.002 (2^-60 each); it counts as explained under bounds
// of 0.0011 each, and ULPs across the turn are not counted.
TEST(SideBySideCircular, DivergenceIsTakenModuloThePeriod) {
  const double two_pi = 2 * 3.141592653589793;
  const float lo = 0.001f, hi = float(two_pi - 0.001);
  // The distance on the circle in 64-bit long double (π to 20 digits): within 2^-70 of exact.
  const long double exact_gap = (long double)lo + (6.28318530717958647692L - (long double)hi);
  int64_t turns = 0;
  const double d = divergence(double(lo), double(hi), two_pi, &turns);
  EXPECT_EQ(turns, 1);
  EXPECT_GE((long double)d, exact_gap);
  EXPECT_LE((long double)d, exact_gap + 0x1p-48L + 0x1p-56L);
  EXPECT_EQ(divergence(0.5, 0.25, two_pi), 0.25 * (1 + 0x1p-52));  // within half a turn: as not circular
  EXPECT_EQ(divergence(0.5, 0.25, 0), 0.25 * (1 + 0x1p-52));
  EXPECT_EQ(divergence(1.0, HUGE_VAL, two_pi), HUGE_VAL);
  TensorReport a, b;
  a.name = b.name = "final_angle_state";
  a.format = b.format = Format::fp32;
  a.computed = {round_nearest_even(Format::fp32, lo)};
  b.computed = {round_nearest_even(Format::fp32, hi)};
  a.exact_nearest = {0.0};
  b.exact_nearest = {two_pi};
  a.bounds = b.bounds = {0.0011};
  const TensorLayout layout{{"i"}, {1}, [](int64_t i) { return std::vector<int64_t>{i}; }};
  const SideBySideTensor circular = compare_tensors(a, b, {layout, two_pi});
  EXPECT_EQ(circular.explained, 1);
  EXPECT_EQ(circular.ulp_max, 0);
  const SideBySideTensor linear = compare_tensors(a, b, {layout, 0});
  EXPECT_EQ(linear.unexplained, 1);
  EXPECT_GT(linear.ulp_max, 0);
}

}  // namespace
}  // namespace ssmv::verify
