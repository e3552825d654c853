// Bad input to SSU: a clear ProblemError naming the field and value, thrown before any
// write (the pool is unchanged), from the host API and from the Params-level twin.
#include <gtest/gtest.h>

#include <string>

#include "fast/ssu/gpu.h"
#include "fast/ssu/ssu.h"
#include "fast/ssu/pack.h"
#include "fast/ssu/twin.h"
#include "fast/ssu/tests/problem_gen.h"

namespace ssmv::ssu::testing {
namespace {

GeneratedProblem small() {
  ProblemConfig c;
  c.requests = 3;
  c.separate_out = true;
  return make_problem(c, 9);
}

// Runs f, expects a ProblemError whose message contains every one of `needles`.
template <typename F>
void expect_error(F&& f, std::initializer_list<std::string> needles) {
  try {
    f();
    ADD_FAILURE() << "no error thrown";
  } catch (const ProblemError& e) {
    for (const std::string& n : needles) EXPECT_NE(std::string(e.what()).find(n), std::string::npos) << e.what();
  }
}

TEST(SsuErrors, ShapeMismatchNamesField) {
  GeneratedProblem g = small();
  g.decode.problem.x.loosen();
  g.decode.problem.x.resize(g.decode.problem.x.size() - 1);
  expect_error([&] { run_twin(g.decode); }, {"'x'"});
}

TEST(SsuErrors, SlotOutOfRangeNamesFieldAndValue) {
  GeneratedProblem g = small();
  g.decode.slot_in[1] = g.decode.slots + 5;
  expect_error([&] { run_twin(g.decode); }, {"slot_in", std::to_string(g.decode.slots + 5)});
}

TEST(SsuErrors, TokenStateSlotOutOfRange) {
  GeneratedProblem g = small();
  g.config.token_state_slots.assign(g.decode.problem.shape.num_tokens(), g.decode.pad_slot_id);
  g.config.token_state_slots[0] = -7;
  expect_error([&] { run_twin(g.decode, g.config); }, {"token_state_slots", "-7"});
}

TEST(SsuErrors, TokenStateSlotWrittenTwice) {
  GeneratedProblem g = small();
  g.config.token_state_slots.assign(g.decode.problem.shape.num_tokens(), g.decode.pad_slot_id);
  g.config.token_state_slots[0] = g.decode.out_slot(0);  // also request 0's final slot
  expect_error([&] { run_twin(g.decode, g.config); }, {"written twice"});
}

TEST(SsuErrors, UnsupportedSizeNamesLimit) {
  ProblemConfig c;
  c.N = 257;
  const GeneratedProblem g = make_problem(c, 1);
  expect_error([&] { run_twin(g.decode); }, {"'N' = 257", "256"});
  c.N = 8;
  c.P = 300;
  const GeneratedProblem h = make_problem(c, 1);
  expect_error([&] { run_twin(h.decode); }, {"'P' = 300"});
}

TEST(SsuErrors, GroupsNotDividingHeads) {
  GeneratedProblem g = small();
  g.decode.problem.shape.G = 3;
  expect_error([&] { run_twin(g.decode); }, {"G"});
}

// Params-level checks (what a caller with raw device pointers gets from ssu::launch).
struct ParamsCase {
  const char* needle;
  void (*edit)(Params&);
};

TEST(SsuErrors, ParamsChecksNameFieldBeforeAnyWrite) {
  const GeneratedProblem g = small();
  const ParamsCase cases[] = {
      {"'x' is null", [](Params& p) { p.x = nullptr; }},
      {"'state' is null", [](Params& p) { p.state = nullptr; }},
      {"'cu_seqlens' is null", [](Params& p) { p.cu_seqlens = nullptr; }},
      {"'state' is not aligned", [](Params& p) { p.state = static_cast<char*>(p.state) + 1; }},
      {"'state_stride_p' = -4", [](Params& p) { p.state_stride_p = -4; }},
      {"'state_stride_p' = 3", [](Params& p) { p.state_stride_p = 3; }},  // rows would overlap (N = 8)
      {"'x_stride_token' = -1", [](Params& p) { p.x_stride_token = -1; }},
      {"'N' = 0", [](Params& p) { p.N = 0; }},
      {"'pad_slot_id' = 0", [](Params& p) { p.pad_slot_id = 0; }},
      {"'D' is set but d_mode is none", [](Params& p) { p.d_mode = DMode::none; }},
      {"dt_limit", [](Params& p) { p.dt_limit_lo = 1.0f, p.dt_limit_hi = 0.5f; }},
  };
  for (const ParamsCase& k : cases) {
    HostLaunch host(g.decode, g.config);
    const std::vector<uint8_t> before = host.state;
    Params p = host.params();
    k.edit(p);
    expect_error([&] { run_twin(p); }, {k.needle});
    EXPECT_EQ(host.state, before) << k.needle;
  }
}

// Index contents: a bad entry late in the arrays still fails before request 0 writes.
TEST(SsuErrors, BadIndexLateInArraysWritesNothing) {
  const GeneratedProblem g = small();
  HostLaunch host(g.decode, g.config);
  const std::vector<uint8_t> before = host.state;
  std::vector<int32_t> slot_in = host.indices.slot_in;
  slot_in.back() = 1 << 20;
  Params p = host.params();
  p.slot_in = slot_in.data();
  expect_error([&] { run_twin(p); }, {"slot_in'[2] = 1048576"});
  EXPECT_EQ(host.state, before);
  std::vector<int32_t> cu = host.indices.cu_seqlens;
  cu[2] = cu[1] - 1;
  p = host.params();
  p.cu_seqlens = cu.data();
  expect_error([&] { run_twin(p); }, {"cu_seqlens"});
  EXPECT_EQ(host.state, before);
}

TEST(SsuErrors, ReadOfASlotAnotherRequestWrites) {
  GeneratedProblem g = small();
  g.decode.slot_out.clear();  // in place: request 0 writes slot_in[0]
  g.decode.slot_in[1] = g.decode.slot_in[0];
  expect_error([&] { run_twin(g.decode); }, {"slot"});
}

// run_gpu checks its input before it looks for a device, and without a kernel or a
// device it says so instead of returning anything.
TEST(SsuErrors, RunGpuChecksInputFirstAndNamesAMissingDevice) {
  GeneratedProblem bad = small();
  bad.decode.slot_in[0] = -5;
  expect_error([&] { run_gpu(bad.decode); }, {"slot_in", "-5"});
  const GeneratedProblem g = small();
  try {
    const Result r = run_gpu(g.decode, g.config);
    EXPECT_EQ(r.y, run_twin(g.decode, g.config).y);  // a device was there
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_TRUE(what.find("no CUDA device") != std::string::npos || what.find("no CUDA kernel") != std::string::npos)
        << what;
  }
}

}  // namespace
}  // namespace ssmv::ssu::testing
