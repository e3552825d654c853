// Counterexample files: write → read gives back every bit of every tensor and every field;
// truncated, incomplete and inconsistent files are rejected naming the file and field.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "verify/reports/counterexample.h"
#include "verify/json/json.h"
#include "verify/contracts/json_fields.h"
#include "spec/realistic_problem.h"
#include "spec/tests/error_text.h"

namespace ssmv::verify {
namespace {

using testing::error_of;

std::string temp_path(const std::string& name) { return ::testing::TempDir() + "counterexample_test_" + name; }

void write_text(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// Bit-for-bit equality of two float tensors (so -0 ≠ +0 would show).
void expect_same_bits(const std::vector<float>& a, const std::vector<float>& b, const char* what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  // memcmp of an empty vector's null data() is undefined behaviour (UBSan says so).
  if (!a.empty()) {
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0) << what;
  }
}

void expect_same_bits(const FormatValues& a, const FormatValues& b, const char* what) {
  expect_same_bits(a.to_vector(), b.to_vector(), what);
}

void expect_same_problem(const Problem& a, const Problem& b) {
  EXPECT_EQ(a.shape.cu_seqlens, b.shape.cu_seqlens);
  EXPECT_EQ(a.shape.H, b.shape.H);
  EXPECT_EQ(a.shape.P, b.shape.P);
  EXPECT_EQ(a.shape.N, b.shape.N);
  EXPECT_EQ(a.shape.G, b.shape.G);
  EXPECT_EQ(a.formats.input, b.formats.input);
  EXPECT_EQ(a.formats.state, b.formats.state);
  EXPECT_EQ(a.formats.output, b.formats.output);
  EXPECT_EQ(a.dt_softplus, b.dt_softplus);
  EXPECT_EQ(a.dt_limit_lo, b.dt_limit_lo);
  EXPECT_EQ(a.dt_limit_hi, b.dt_limit_hi);
  expect_same_bits(a.x, b.x, "x");
  expect_same_bits(a.dt, b.dt, "dt");
  expect_same_bits(a.A, b.A, "A");
  expect_same_bits(a.B, b.B, "B");
  expect_same_bits(a.C, b.C, "C");
  expect_same_bits(a.z, b.z, "z");
  expect_same_bits(a.dt_bias, b.dt_bias, "dt_bias");
  expect_same_bits(a.D, b.D, "D");
  expect_same_bits(a.initial_state, b.initial_state, "initial_state");
}

// A prefill counterexample with every optional tensor: fp16 inputs, bf16 state, fp32
// output, D per (head, dim), a dt limit; one value a negative zero.
Counterexample prefill_case() {
  const Shape s{{0, 5, 12}, 4, 3, 8, 2};  // cu_seqlens, H, P, N, G
  RealisticOptions o;
  o.d_mode = DMode::per_head_dim;
  Counterexample c;
  c.problem = realistic_problem(s, Formats{Format::fp16, Format::bf16, Format::fp32}, 11, o);
  c.problem.dt_limit_lo = 0.001f;
  c.problem.dt_limit_hi = 0.25f;
  c.problem.x.loosen();  // edited, then held as fp16 bits again as generated
  c.problem.x.set(3, -0.0f);
  c.problem.x.narrow(Format::fp16);
  c.kernel = "chunk_scan+ssu";
  c.contract = "chunk_scan.production+ssu";
  c.chunk_size = 64;
  c.split = 3;
  c.device = "gpu";
  c.planted_bug = "";
  c.property = "handoff_matches_prefill";
  c.reproduce = "RC_PARAMS=\"reproduce=BchdlNGdvJ3XzIXY\" ./properties_handoff";
  c.verdict = "VIOLATION";
  c.worst = "y (sequence 1, token 4, head 2, dim 0): computed 0x3f80 ...";
  return c;
}

// A decode counterexample: 3 requests over a pool of 4 slots, one of them padding.
Counterexample decode_case() {
  const Shape s{{0, 1, 2, 4}, 2, 4, 16, 1};  // cu_seqlens, H, P, N, G
  RealisticOptions o;
  o.initial_state = false;
  Counterexample c;
  c.decode.problem = realistic_problem(s, Formats{}, 5, o);
  c.decode.slots = 4;
  const Problem pool_source = realistic_problem(Shape{{0, 1, 2, 3, 4}, 2, 4, 16, 1}, Formats{}, 6);
  c.decode.state_pool = pool_source.initial_state;  // [4, H, P, N] fp32
  c.decode.slot_in = {2, -1, 0};
  c.decode.slot_out = {3, -1, 1};
  c.decode.pad_slot_id = -1;
  c.kernel = "ssu";
  c.contract = "ssu";
  c.property = "ssu_within_contract";
  c.reproduce = "seed 0x1234";
  c.verdict = "INVALID";
  c.worst = "state_pool (slot 3, head 0, dim 1, state 2): never written";
  return c;
}

TEST(Counterexample, PrefillRoundTripKeepsEveryBit) {
  const Counterexample c = prefill_case();
  const std::string path = temp_path("prefill.json");
  write_counterexample(path, c);
  const Counterexample r = read_counterexample(path);
  EXPECT_EQ(r.kernel, c.kernel);
  EXPECT_EQ(r.contract, c.contract);
  EXPECT_EQ(r.chunk_size, c.chunk_size);
  EXPECT_EQ(r.split, c.split);
  EXPECT_EQ(r.device, c.device);
  EXPECT_EQ(r.planted_bug, c.planted_bug);
  EXPECT_EQ(r.property, c.property);
  EXPECT_EQ(r.reproduce, c.reproduce);
  EXPECT_EQ(r.verdict, c.verdict);
  EXPECT_EQ(r.worst, c.worst);
  expect_same_problem(c.problem, r.problem);
  ASSERT_FALSE(r.problem.z.empty());  // not vacuous: the optional tensors were there
  ASSERT_FALSE(r.problem.initial_state.empty());
  // Written exactly as documented: fp16 x as 4-digit patterns, the negative zero kept.
  const json::Value v = json::parse(read_text_file(path));
  EXPECT_EQ(v.at("problem").at("tensors").at("x").at("bits").at(3).get<std::string>(), "0x8000");
  std::filesystem::remove(path);
}

TEST(Counterexample, DecodeRoundTripKeepsPoolAndSlots) {
  const Counterexample c = decode_case();
  const std::string path = temp_path("decode.json");
  write_counterexample(path, c);
  const Counterexample r = read_counterexample(path);
  expect_same_problem(c.decode.problem, r.decode.problem);
  expect_same_bits(c.decode.state_pool, r.decode.state_pool, "state_pool");
  ASSERT_EQ(r.decode.state_pool.size(), size_t(4 * 2 * 4 * 16));
  EXPECT_EQ(r.decode.slots, 4);
  EXPECT_EQ(r.decode.slot_in, c.decode.slot_in);
  EXPECT_EQ(r.decode.slot_out, c.decode.slot_out);
  EXPECT_EQ(r.decode.pad_slot_id, -1);
  EXPECT_EQ(r.verdict, "INVALID");
  std::filesystem::remove(path);
}

// The property harness records a case that threw with verdict ERROR.
TEST(Counterexample, ErrorVerdictRoundTrips) {
  Counterexample c = prefill_case();
  c.verdict = "ERROR";
  c.worst = "";
  const std::string path = temp_path("error.json");
  write_counterexample(path, c);
  EXPECT_EQ(read_counterexample(path).verdict, "ERROR");
  std::filesystem::remove(path);
}

TEST(CounterexampleErrors, TruncatedFile) {
  const std::string path = temp_path("truncated.json");
  write_counterexample(path, prefill_case());
  const std::string text = read_text_file(path);
  write_text(path, text.substr(0, text.size() * 2 / 3));
  const std::string msg = error_of([&] { read_counterexample(path); });
  EXPECT_EQ(msg.rfind(path + ": invalid JSON (truncated or malformed): JSON line ", 0), 0u) << msg;
  std::filesystem::remove(path);
}

// The written file with one member of `object_path` (a chain of keys) edited by `edit`.
template <typename Edit>
std::string edited(const std::string& name, std::vector<std::string> object_path, Edit edit,
                   const Counterexample& c = prefill_case()) {
  const std::string path = temp_path(name);
  write_counterexample(path, c);
  json::Value v = json::parse(read_text_file(path));
  json::Value* o = &v;
  for (const std::string& k : object_path) o = &o->at(k);
  edit(*o);
  write_text(path, json::dump(v));
  return path;
}

void remove_member(json::Value& o, const std::string& key) { o.erase(key); }

TEST(CounterexampleErrors, MissingFieldNamesFileAndField) {
  const std::string path = edited("missing.json", {}, [](json::Value& o) { remove_member(o, "split"); });
  EXPECT_EQ(error_of([&] { read_counterexample(path); }), path + ": field 'split': missing");
  const std::string nested =
      edited("missing_tensor.json", {"problem", "tensors"}, [](json::Value& o) { remove_member(o, "dt"); });
  EXPECT_EQ(error_of([&] { read_counterexample(nested); }), nested + ": field 'problem'.'tensors'.'dt': missing");
  std::filesystem::remove(path);
  std::filesystem::remove(nested);
}

TEST(CounterexampleErrors, BadValuesNameTheField) {
  const std::string bits = edited("bits.json", {"problem", "tensors", "x"}, [](json::Value& o) {
    o.at("bits")[2] = "0x3f800000";
  });
  EXPECT_EQ(error_of([&] { read_counterexample(bits); }),
            bits + ": field 'problem'.'tensors'.'x'.'bits'[2]: '0x3f800000' is not a fp16 bit pattern (0x and 4 hex "
                   "digits)");
  const std::string shape = edited("shape.json", {"problem", "tensors", "A"}, [](json::Value& o) {
    o.at("shape") = json::parse("[5]");
  });
  EXPECT_EQ(error_of([&] { read_counterexample(shape); }),
            shape + ": field 'problem'.'tensors'.'A'.'shape': [5] disagrees with the problem's shape [4]");
  const std::string kernel = edited("kernel.json", {}, [](json::Value& o) {
    o.at("kernel") = "ssd";
  });
  EXPECT_EQ(error_of([&] { read_counterexample(kernel); }),
            kernel + ": field 'kernel': unknown value 'ssd' (expected ssu, chunk_scan, chunk_scan+ssu)");
  // NaN in an input: the file is well-formed, the problem is not (spec's validate).
  const std::string nan = edited("nan.json", {"problem", "tensors", "dt"}, [](json::Value& o) {
    o.at("bits")[0] = "0x7e00";
  });
  const std::string msg = error_of([&] { read_counterexample(nan); });
  EXPECT_EQ(msg.rfind(nan + ": field 'problem': invalid problem: ", 0), 0u) << msg;
  EXPECT_NE(msg.find("dt"), std::string::npos) << msg;
  const std::string split = edited("split.json", {}, [](json::Value& o) {
    o.at("split") = 6;
  });
  EXPECT_EQ(error_of([&] { read_counterexample(split); }),
            split + ": field 'split': 6 is outside [0, 5] for sequence 0");
  for (const std::string& p : {bits, shape, kernel, nan, split}) std::filesystem::remove(p);
}

TEST(CounterexampleErrors, DecodeSlotsAreValidated) {
  const std::string path = edited(
      "slots.json", {"decode"},
      [](json::Value& o) {
        o.at("slot_in") = json::parse("[2, -1, 7]");
      },
      decode_case());
  const std::string msg = error_of([&] { read_counterexample(path); });
  EXPECT_EQ(msg.rfind(path + ": field 'decode': invalid problem: ", 0), 0u) << msg;
  // An infinite x (bf16 0x7f80) in the decode problem's tokens names 'problem'.
  const std::string inf = edited(
      "decode_inf.json", {"problem", "tensors", "x"},
      [](json::Value& o) {
        o.at("bits")[1] = "0x7f80";
      },
      decode_case());
  const std::string inf_msg = error_of([&] { read_counterexample(inf); });
  EXPECT_EQ(inf_msg.rfind(inf + ": field 'problem': invalid problem: ", 0), 0u) << inf_msg;
  std::filesystem::remove(path);
  std::filesystem::remove(inf);
}

TEST(CounterexampleErrors, WriteToMissingDirectoryLeavesNothing) {
  const std::string dir = temp_path("no_such_dir");
  std::filesystem::remove_all(dir);
  EXPECT_THROW(write_counterexample(dir + "/c.json", prefill_case()), std::runtime_error);
  EXPECT_FALSE(std::filesystem::exists(dir));
}

}  // namespace
}  // namespace ssmv::verify
