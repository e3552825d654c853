// Contracts as JSON: every preset survives a round trip field for field, the documented
// example file loads, and every kind of bad input is rejected naming the file and field.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "reference/reference.h"
#include "verify/bound/sequential_bound.h"
#include "verify/judge/exact_bounds.h"
#include "verify/contracts/contract_json.h"
#include "spec/realistic_problem.h"
#include "spec/tests/error_text.h"

namespace ssmv::verify {
namespace {

const std::filesystem::path kExample =
    std::filesystem::path(__FILE__).parent_path() / "../../docs/examples/contract-example.json";

using testing::error_of;

void expect_same(const Contract& a, const Contract& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.kernel, b.kernel);
  EXPECT_EQ(a.family, b.family);
  EXPECT_EQ(a.chunk_size, b.chunk_size);
  EXPECT_EQ(a.chunk_layout, b.chunk_layout);
  EXPECT_EQ(a.accumulation, b.accumulation);
  ASSERT_EQ(a.roundings.size(), b.roundings.size());
  for (size_t i = 0; i < a.roundings.size(); ++i) {
    EXPECT_EQ(a.roundings[i].point, b.roundings[i].point);
    EXPECT_EQ(a.roundings[i].format, b.roundings[i].format);
  }
  ASSERT_EQ(a.transcendentals.size(), b.transcendentals.size());
  for (size_t i = 0; i < a.transcendentals.size(); ++i) {
    const TranscendentalBudget &x = a.transcendentals[i], &y = b.transcendentals[i];
    EXPECT_EQ(x.function, y.function);
    // Exact equality of doubles: the writer prints the shortest literal that reads back.
    EXPECT_EQ(x.ulp_const, y.ulp_const);
    EXPECT_EQ(x.ulp_per_abs_arg, y.ulp_per_abs_arg);
    EXPECT_EQ(x.abs_error, y.abs_error);
    EXPECT_EQ(x.arg_lo, y.arg_lo);
    EXPECT_EQ(x.arg_hi, y.arg_hi);
    EXPECT_EQ(x.how_measured, y.how_measured);
  }
  ASSERT_EQ(a.reductions.size(), b.reductions.size());
  for (size_t i = 0; i < a.reductions.size(); ++i) {
    EXPECT_EQ(a.reductions[i].sum, b.reductions[i].sum);
    EXPECT_EQ(a.reductions[i].what, b.reductions[i].what);
    EXPECT_EQ(a.reductions[i].order, b.reductions[i].order);
    EXPECT_EQ(a.reductions[i].partials, b.reductions[i].partials);
    EXPECT_EQ(a.reductions[i].detail, b.reductions[i].detail);
  }
  EXPECT_EQ(a.flush_to_zero, b.flush_to_zero);
  EXPECT_EQ(a.softplus_shortcut, b.softplus_shortcut);
  EXPECT_EQ(a.gpu_twin_max_ulps, b.gpu_twin_max_ulps);
  EXPECT_EQ(a.gpu_twin_how_measured, b.gpu_twin_how_measured);
}

class ContractPresetRoundTrip : public ::testing::TestWithParam<std::string> {};

TEST_P(ContractPresetRoundTrip, JsonGivesBackEveryField) {
  const Contract c = contract_preset(GetParam(), 128);
  const std::string text = json::dump(contract_to_json(c), 2);
  expect_same(c, parse_contract(text, "preset.json"));
  // And the text itself is stable (write → read → write).
  EXPECT_EQ(json::dump(contract_to_json(parse_contract(text, "preset.json")), 2), text);
}

INSTANTIATE_TEST_SUITE_P(Presets, ContractPresetRoundTrip,
                         ::testing::Values("ssu", "chunk_scan.production", "chunk_scan.fp32"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& ch : n) ch = ch == '.' ? '_' : ch;
                           return n;
                         });

TEST(ContractJson, InfiniteArgumentLimitsAreStrings) {
  const json::Value v = contract_to_json(contract_preset("ssu", 0));
  // ssu's exp budget holds on (-inf, 88.72].
  const json::Value& exp = v.at("transcendentals").at(0);
  ASSERT_EQ(exp.at("function").get<std::string>(), "exp");
  EXPECT_EQ(exp.at("arg_lo").get<std::string>(), "-inf");
  EXPECT_EQ(exp.at("arg_hi").get<double>(), 88.72);
}

TEST(ContractJson, FileRoundTripAndLoadByPath) {
  const std::string path = ::testing::TempDir() + "contract_json_test_roundtrip.json";
  const Contract c = contract_preset("chunk_scan.fp32", 64);
  write_contract_file(path, c);
  expect_same(c, read_contract_file(path));
  expect_same(c, load_contract(path, 64));
  expect_same(c, load_contract(path, 0));  // 0: take the file's chunk size
  EXPECT_EQ(error_of([&] { load_contract(path, 128); }),
            path + ": field 'chunk_size': the contract is for chunk size 64, the run uses 128");
  std::filesystem::remove(path);
}

TEST(ContractJson, PresetsByName) {
  EXPECT_EQ(load_contract("ssu", 0).name, "ssu");
  EXPECT_EQ(load_contract("chunk_scan.production", 256).chunk_size, 256);
  EXPECT_EQ(load_contract("chunk_scan.fp32", 64).name, "chunk_scan.fp32");
  EXPECT_EQ(error_of([] { load_contract("chunk_scan.bf16", 64); }),
            "contract 'chunk_scan.bf16' is neither a preset (ssu, chunk_scan.production, chunk_scan.fp32, triton.ssu, "
            "triton.chunk_scan, triton.chunk_scan.varlen, flashinfer.ssu, flashinfer.ssu.sr) nor an existing JSON file");
  EXPECT_EQ(load_contract("triton.chunk_scan.varlen", 128).chunk_layout, ChunkLayout::global);
  EXPECT_EQ(load_contract("triton.chunk_scan", 128).chunk_layout, ChunkLayout::sequence);
  EXPECT_EQ(error_of([] { contract_preset("chunk_scan.fp32", 0); }),
            "contract 'chunk_scan.fp32' needs a chunk size >= 1, got 0");
}

// The example in docs/contracts.md: a Triton decode kernel whose tl.exp costs
// 2.006 + 1.162|x| ULP (measured over every fp32 argument, docs/design.md §4.2), loaded as a
// user would.
TEST(ContractJson, DocumentedExampleLoads) {
  const Contract c = load_contract(kExample.string(), 0);
  EXPECT_EQ(c.name, "my_triton_decode.bf16");
  EXPECT_EQ(c.family, Family::sequential);
  const TranscendentalBudget* exp = nullptr;
  for (const TranscendentalBudget& b : c.transcendentals) exp = b.function == "exp" ? &b : exp;
  ASSERT_NE(exp, nullptr);
  EXPECT_EQ(exp->ulp_const, 2.006);
  EXPECT_EQ(exp->ulp_per_abs_arg, 1.162);
  EXPECT_EQ(exp->arg_lo, -HUGE_VAL);
  EXPECT_EQ(exp->arg_hi, 0.0);
  EXPECT_FALSE(c.roundings.empty());
  EXPECT_FALSE(c.reductions.empty());
}

// The example drives the sequential bound like a preset does: on a decode problem with a
// bf16 state every bound is finite and positive, and at least the ssu preset's: its
// transcendental budgets are larger everywhere (exp 2.006 + 1.162|x| ULP against 1; softplus
// 1.255 ULP plus 1.24e-7 against 1.6; sigmoid 2.979 + 1.154|z| against 2.5), and its
// any_order y sum is deeper at N = 32 (32 roundings against ssu's 32/16 + log2 16 = 6).
TEST(ContractJson, DocumentedExampleBoundsADecodeProblem) {
  const Contract triton = load_contract(kExample.string(), 0);
  const Contract ssu = contract_preset("ssu", 0);
  const Shape s{{0, 1, 2}, 2, 4, 32, 1};  // cu_seqlens, H, P, N, G: two requests of one token
  Problem p = realistic_problem(s, Formats{Format::bf16, Format::bf16, Format::bf16}, 9);
  const ref::ExactResult exact = ref::compute(p);
  auto bounds = [&](const Contract& c) {
    return bound::sequential_bounds(sequential_input_for(p, c, exact, /*tokens_per_launch=*/0));
  };
  const bound::SequentialBounds bt = bounds(triton), bs = bounds(ssu);
  ASSERT_EQ(bt.y.size(), size_t(2 * 2 * 4));
  for (size_t i = 0; i < bt.y.size(); ++i) {
    EXPECT_TRUE(std::isfinite(bt.y[i]) && bt.y[i] > 0) << i;
    EXPECT_GE(bt.y[i], bs.y[i]) << i;
  }
  for (size_t i = 0; i < bt.stored_state.size(); ++i) EXPECT_GE(bt.stored_state[i], bs.stored_state[i]) << i;
}

// The example with one member replaced (or removed, when `value` is empty), as text.
std::string example_with(const std::string& key, const std::string& value) {
  json::Value v = json::parse(read_text_file(kExample.string()));
  json::Value out = json::Value::object();
  for (auto& [k, m] : v.items()) {
    if (k != key) out[k] = m;
    else if (!value.empty()) out[k] = json::parse(value);
  }
  return json::dump(out);
}

TEST(ContractJsonErrors, UnknownRoundingFormatNamesFileAndField) {
  const std::string text = example_with(
      "roundings", R"([{"point": "stored_state", "format": "state"}, {"point": "output", "format": "bf17"}])");
  EXPECT_EQ(error_of([&] { parse_contract(text, "mykernel.json"); }),
            "mykernel.json: field 'roundings'[1].'format': unknown format 'bf17' (expected input, state, output, "
            "fp32, bf16, fp16)");
}

TEST(ContractJsonErrors, MissingField) {
  EXPECT_EQ(error_of([] { parse_contract(example_with("roundings", ""), "k.json"); }),
            "k.json: field 'roundings': missing");
}

TEST(ContractJsonErrors, UnknownFieldListsTheExpectedOnes) {
  json::Value v = json::parse(read_text_file(kExample.string()));
  v["rounding_points"] = json::Value::array();
  EXPECT_EQ(error_of([&] { parse_contract(json::dump(v), "k.json"); }),
            "k.json: field 'rounding_points': unknown field (expected name, kernel, family, chunk_size, "
            "chunk_layout, accumulation, input_formats, roundings, transcendentals, reductions, flush_to_zero, softplus_shortcut, "
            "gpu_twin_max_ulps, gpu_twin_how_measured)");
}

TEST(ContractJsonErrors, WrongTypesAndValues) {
  EXPECT_EQ(error_of([] { parse_contract(example_with("chunk_size", R"("64")"), "k.json"); }),
            "k.json: field 'chunk_size': expected an integer, found string");
  EXPECT_EQ(error_of([] { parse_contract(example_with("chunk_size", "64"), "k.json"); }),
            "k.json: field 'chunk_size': must be 0 for the sequential family, found 64");
  EXPECT_EQ(error_of([] { parse_contract(example_with("family", R"("blocked")"), "k.json"); }),
            "k.json: field 'family': unknown family 'blocked' (expected sequential, chunked)");
  EXPECT_EQ(error_of([] { parse_contract(example_with("flush_to_zero", "0"), "k.json"); }),
            "k.json: field 'flush_to_zero': expected true or false, found number");
  EXPECT_EQ(error_of([] { parse_contract(example_with("gpu_twin_max_ulps", "-1"), "k.json"); }),
            "k.json: field 'gpu_twin_max_ulps': must be >= 0, found -1");
  EXPECT_EQ(error_of([] {
              parse_contract(example_with("transcendentals",
                                          R"([{"function": "exp", "ulp_const": 1, "ulp_per_abs_arg": 0,
                                               "abs_error": 0, "arg_lo": 5, "arg_hi": "-inf", "how_measured": ""}])"),
                             "k.json");
            }),
            "k.json: field 'transcendentals'[0].'arg_hi': the argument range [5, -inf] is empty");
  EXPECT_EQ(error_of([] {
              parse_contract(example_with("transcendentals",
                                          R"([{"function": "tanh", "ulp_const": 1, "ulp_per_abs_arg": 0,
                                               "abs_error": 0, "arg_lo": 0, "arg_hi": 1, "how_measured": ""}])"),
                             "k.json");
            }),
            "k.json: field 'transcendentals'[0].'function': unknown function 'tanh' (expected exp, softplus, "
            "sigmoid, log1p)");
  EXPECT_EQ(error_of([] {
              parse_contract(example_with("roundings", R"([{"point": "output", "format": "output"},
                                                           {"point": "output", "format": "bf16"}])"),
                             "k.json");
            }),
            "k.json: field 'roundings'[1].'point': point 'output' is listed twice");
  EXPECT_EQ(error_of([] {
              parse_contract(example_with("reductions", R"([{"sum": "y", "what": "y", "order": "tree", "partials": 4,
                                                            "detail": ""}])"),
                             "k.json");
            }),
            "k.json: field 'reductions'[0].'partials': must be 1 for order 'tree', found 4");
  EXPECT_EQ(error_of([] {
              parse_contract(example_with("reductions", R"([{"sum": "y", "what": "y", "order": "any_order",
                                                            "partials": 2, "detail": ""}])"),
                             "k.json");
            }),
            "k.json: field 'reductions'[0].'partials': must be 1 for order 'any_order', found 2");
  EXPECT_EQ(error_of([] { parse_contract(example_with("chunk_layout", R"("global")"), "k.json"); }),
            "k.json: field 'chunk_layout': must be 'sequence' for the sequential family, found 'global'");
  EXPECT_EQ(error_of([] { parse_contract(example_with("chunk_layout", R"("packed")"), "k.json"); }),
            "k.json: field 'chunk_layout': unknown chunk layout 'packed' (expected sequence, global)");
  EXPECT_EQ(error_of([] { parse_contract(example_with("chunk_layout", ""), "k.json"); }),
            "k.json: field 'chunk_layout': missing");
}

// Reductions are selected by their typed `sum`, never by the text of `what`.
TEST(ContractJsonErrors, ReductionSums) {
  auto with_reductions = [](const std::string& r) {
    return error_of([&] { parse_contract(example_with("reductions", r), "k.json"); });
  };
  EXPECT_EQ(with_reductions(R"([{"sum": "yy", "what": "y", "order": "tree", "partials": 1, "detail": ""}])"),
            "k.json: field 'reductions'[0].'sum': unknown sum 'yy' (expected cumsum, chunk_state, state_passing, "
            "CB, y)");
  EXPECT_EQ(with_reductions(R"([{"what": "y", "order": "tree", "partials": 1, "detail": ""}])"),
            "k.json: field 'reductions'[0].'sum': missing");
  EXPECT_EQ(with_reductions(R"([{"sum": "y", "what": "a", "order": "tree", "partials": 1, "detail": ""},
                                {"sum": "y", "what": "b", "order": "tree", "partials": 1, "detail": ""}])"),
            "k.json: field 'reductions'[1].'sum': sum 'y' is listed twice");
  EXPECT_EQ(with_reductions(R"([{"sum": "cumsum", "what": "y", "order": "tree", "partials": 1, "detail": ""}])"),
            "k.json: field 'reductions'[0].'sum': sum 'cumsum' is not used by the sequential family (expected y)");
}

// A sum the file does not declare is filled in explicitly: one sequential chain, saying so.
TEST(ContractJson, UndeclaredSumIsFilledInAsOneSequentialChain) {
  const Contract seq = parse_contract(example_with("reductions", "[]"), "k.json");
  ASSERT_EQ(seq.reductions.size(), 1u);
  EXPECT_EQ(seq.reductions[0].sum, Sum::y);
  EXPECT_EQ(seq.reductions[0].order, ReductionOrder::sequential_fma);
  EXPECT_EQ(seq.reductions[0].partials, 1);
  EXPECT_EQ(seq.reductions[0].what, "y: not declared by the contract");
  // A chunked contract without its cumsum: the other four as written, cumsum appended.
  json::Value v = contract_to_json(contract_preset("chunk_scan.fp32", 64));
  json::Value& reductions = v.at("reductions");
  reductions.erase(reductions.begin());
  const Contract ch = parse_contract(json::dump(v), "k.json");
  ASSERT_EQ(ch.reductions.size(), 5u);
  EXPECT_EQ(ch.reductions.back().sum, Sum::cumsum);
  EXPECT_EQ(ch.reductions.back().detail.rfind("not declared", 0), 0u);
  EXPECT_EQ(reduction_of(ch, Sum::cb).what, "C·Bᵀ: Σ_n C_m[n]·B_k[n]");
}

TEST(ContractReductions, AnyOrderDepthIsTheLength) {
  Reduction r;
  r.order = ReductionOrder::any_order;
  EXPECT_EQ(reduction_depth(r, 1), 1);
  EXPECT_EQ(reduction_depth(r, 32), 32);
  EXPECT_EQ(reduction_depth(r, 257), 257);
  r.order = ReductionOrder::tree;
  EXPECT_EQ(reduction_depth(r, 32), 5);
}

TEST(ContractJsonErrors, TruncatedFile) {
  const std::string text = read_text_file(kExample.string());
  const std::string msg = error_of([&] { parse_contract(text.substr(0, text.size() / 2), "cut.json"); });
  EXPECT_EQ(msg.rfind("cut.json: invalid JSON (truncated or malformed): JSON line ", 0), 0u) << msg;
}

TEST(ContractJsonErrors, UnreadableFile) {
  EXPECT_EQ(error_of([] { read_contract_file("/nonexistent/k.json"); }),
            "/nonexistent/k.json: cannot read: No such file or directory");
}

}  // namespace
}  // namespace ssmv::verify
