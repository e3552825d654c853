// Real-kernel fixtures: dumps of mamba_ssm's production Triton kernels run on the H200
// (verify/tests/triton_fixtures/README.md says how they were made). Each is self-describing
// (ssmv.* metadata), so it is judged exactly as `ssmv check FILE` judges it. Every fixture
// must be within its preset — a change to the bounds that breaks real kernels fails here —
// and deliberately wrong options or contracts must be caught as a VIOLATION in the tensor
// they corrupt, so the presets are not vacuous either.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "verify/cli/dump_options.h"
#include "verify/contracts/contract_json.h"
#include "verify/family/mamba2/dump_reading.h"
#include "verify/judge/external_check.h"

namespace ssmv::verify {
namespace {

std::vector<std::string> fixtures() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(SSMV_TRITON_FIXTURES)) {
    if (e.path().extension() == ".npz") out.push_back(e.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

family::mamba2::ResolvedDump load(const std::string& name) {
  return family::mamba2::resolve(cli::read_dump(std::string(SSMV_TRITON_FIXTURES) + "/" + name, "", {}).files());
}

KernelCheck check(const family::mamba2::ResolvedDump& d) {
  return check_external(d.problem, d.kernel, d.outputs.y, d.outputs.final_states);
}

const TensorReport* tensor(const KernelCheck& kc, const std::string& name) {
  for (const TensorReport& t : kc.tensors) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

// Fixtures the presets judge (all but the fp32-input chunk_scan dump, which its preset refuses).
std::vector<std::string> judged_fixtures() {
  std::vector<std::string> out;
  for (const std::string& f : fixtures()) {
    if (f.find("fp32in") == std::string::npos || f.rfind("ssu_", 0) == 0) out.push_back(f);
  }
  return out;
}

int64_t violations(const KernelCheck& kc, const std::string& name) {
  const TensorReport* t = tensor(kc, name);
  return t == nullptr ? -1 : t->count(Verdict::violation);
}

TEST(TritonFixtures, CoverEveryKernelFamilyAndLayout) {
  int ssu = 0, batched = 0, varlen = 0, handoff = 0;
  for (const std::string& f : judged_fixtures()) {
    const family::mamba2::ResolvedDump d = load(f);
    ssu += d.kernel.family == "ssu";
    handoff += d.kernel.family == "handoff";
    if (d.kernel.family == "chunk_scan") (d.kernel.contract.chunk_layout == ChunkLayout::global ? varlen : batched)++;
  }
  EXPECT_GE(ssu, 3);
  EXPECT_GE(batched, 3);
  EXPECT_GE(varlen, 1);
  EXPECT_GE(handoff, 2);
}

class TritonFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(TritonFixture, IsWithinItsPreset) {
  const family::mamba2::ResolvedDump d = load(GetParam());
  const KernelCheck kc = check(d);
  ASSERT_FALSE(kc.tensors.empty());
  for (const TensorReport& t : kc.tensors) {
    EXPECT_TRUE(t.ok()) << GetParam() << " " << t.name << ": " << t.count(Verdict::violation) << " VIOLATION, "
                        << t.count(Verdict::invalid) << " INVALID, usage " << t.max_bound_usage;
    std::printf("%-48s %-12s usage %.4f  exact %lld/%lld\n", GetParam().c_str(), t.name.c_str(), t.max_bound_usage,
                (long long)t.count(Verdict::exact), (long long)t.elements);
  }
  // Not vacuous: a real kernel's outputs are not all correctly rounded (a bf16 y of a few
  // decode steps may be; its fp32 or 16-bit states are not).
  int64_t within = 0;
  for (const TensorReport& t : kc.tensors) within += t.count(Verdict::within_contract);
  EXPECT_GT(within, 0) << GetParam();
}

INSTANTIATE_TEST_SUITE_P(Dumps, TritonFixture, ::testing::ValuesIn(judged_fixtures()), [](const auto& info) {
  std::string n = info.param.substr(0, info.param.size() - 4);
  std::replace_if(n.begin(), n.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
  return n;
});

// The bundled SSU's contract allows its own transcendentals (a few ULP); Triton's softplus
// log(exp(v) + 1) errs by up to 1.24e-7 absolute (docs/measurements/triton-budgets.md),
// about 1e-5 relative on realistic δ, which an fp32 state carries: judged by the `ssu`
// preset, a correct Triton decode with an fp32 state and softplus is a VIOLATION in its
// states (measured usage 5 to 42 on these dumps); its bf16 output is not (the output
// rounding dominates y's bound).
TEST(TritonWrongContract, AnSsuDumpWithAnFp32StateViolatesTheBundledSsuPreset) {
  int judged = 0;
  for (const std::string& f : judged_fixtures()) {
    family::mamba2::ResolvedDump d = load(f);
    if (d.kernel.family != "ssu" || d.problem.formats.state != Format::fp32 || !d.problem.dt_softplus) continue;
    d.kernel.contract = load_contract("ssu", 0);
    EXPECT_GT(violations(check(d), "final_state"), 0) << f;
    ++judged;
  }
  EXPECT_GE(judged, 4);
}

// Without its bf16 rounding points (dt_scaled_B, decayed_CB, incoming_state) the chunked
// bound is fp32-tight: a production chunk_scan is far outside it (measured usage 24 to 423).
TEST(TritonWrongContract, AChunkedDumpViolatesTheFp32Contract) {
  int judged = 0;
  for (const std::string& f : judged_fixtures()) {
    family::mamba2::ResolvedDump d = load(f);
    if (d.kernel.family == "ssu") continue;
    const ChunkLayout layout = d.kernel.contract.chunk_layout;
    d.kernel.contract = load_contract("chunk_scan.fp32", d.kernel.contract.chunk_size);
    d.kernel.contract.chunk_layout = layout;
    EXPECT_GT(violations(check(d), "y"), 0) << f;
    ++judged;
  }
  EXPECT_GE(judged, 8);
}

// dt_softplus declared the other way round changes every δ: far outside the bound in y
// (measured usage 210 and more). (An SSU dump without softplus then has δ < 0 and δ·A > 0,
// outside the exp budget's range: refused, tested below.)
TEST(TritonWrongOption, AFlippedSoftplusOptionIsAViolationInY) {
  int judged = 0;
  for (const std::string& f : judged_fixtures()) {
    family::mamba2::ResolvedDump d = load(f);
    if (d.kernel.family == "ssu" && d.problem.dt_softplus) continue;  // refused instead (exp argument > 0)
    d.problem.dt_softplus = !d.problem.dt_softplus;
    EXPECT_GT(violations(check(d), "y"), 0) << f;
    ++judged;
  }
  EXPECT_GE(judged, 9);
}


// A hand-off judged as one decode kernel (the check that existed before `--kernel
// handoff`) and a hand-off with the wrong prefix: the chunked tokens fall under the fp32
// decode bound (measured usage 50 to 87 as one kernel; 61 with the prefix halved).
TEST(TritonWrongOption, AHandoffJudgedAsOneDecodeKernelIsAViolation) {
  for (const char* name : {"handoff_L64_K100_fp32state.npz", "example_handoff_K200_fp32state.npz"}) {
    family::mamba2::ResolvedDump d = load(name);
    d.kernel.family = "ssu";
    d.kernel.prefill_tokens.clear();
    d.kernel.contract = d.kernel.decode_contract;
    EXPECT_GT(violations(check(d), "y"), 0) << name;
  }
}

TEST(TritonWrongOption, AHalvedHandoffPrefixIsAViolationInY) {
  family::mamba2::ResolvedDump d = load("example_handoff_K200_fp32state.npz");
  for (int64_t& k : d.kernel.prefill_tokens) k /= 2;
  EXPECT_GT(violations(check(d), "y"), 0);
}

TEST(TritonPresets, Fp32InputsAreRefusedByTheChunkedPreset) {
  // tl.dot rounds fp32 operands to tf32 (docs/measurements/triton-kernel-notes.md), which
  // no rounding point of triton.chunk_scan names.
  try {
    load("chunk_scan_batched_L64_fp32in_z_D.npz");
    FAIL() << "no error";
  } catch (const ProblemError& e) {
    EXPECT_NE(std::string(e.what()).find("input format fp32: contract 'triton.chunk_scan' describes inputs in bf16, "
                                         "fp16 only"),
              std::string::npos)
        << e.what();
  }
}

TEST(TritonPresets, APresetOfTheOtherFamilyIsRefused) {
  family::mamba2::ResolvedDump d = load("ssu_bf16in_fp32state_z_D_T4.npz");
  d.kernel.contract = load_contract("triton.chunk_scan", 64);
  EXPECT_THROW(check(d), ProblemError);
}

TEST(TritonPresets, AnSsuDumpWithoutItsSoftplusIsRefusedNotJudged) {
  family::mamba2::ResolvedDump d = load("ssu_bf16in_fp32state_z_D_T4.npz");
  d.problem.dt_softplus = false;  // δ = dt + dt_bias < 0 for these data: δ·A > 0
  try {
    check(d);
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("outside its budget's range"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ssmv::verify
